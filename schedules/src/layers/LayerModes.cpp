#include "LayerModes.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "moesim/common/Error.hpp"

namespace moesim::schedules::detail {

namespace {
[[noreturn]] void bad_option(const std::string& key, const std::string& value, const std::string& expected) {
  throw ConfigError("", "--opt", key + "=" + value + ": expected " + expected);
}

int parse_count(const std::string& key, const std::string& value, const std::string& text) {
  int n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || ptr != text.data() + text.size() || n < 0)
    bad_option(key, value, "all, first:N or last:N");
  return n;
}
}  // namespace

bool sync_splits(const std::map<std::string, std::string>& options) {
  auto it = options.find("sync_splits");
  if (it == options.end() || it->second == "on") return true;
  if (it->second == "off") return false;
  bad_option("sync_splits", it->second, "on or off");
}

bool quantized_allreduce(const std::map<std::string, std::string>& options) {
  auto it = options.find("allreduce");
  if (it == options.end() || it->second == "bf16") return false;
  if (it->second == "quantized") return true;
  bad_option("allreduce", it->second, "bf16 or quantized");
}

bool copy_engine_transport(const std::map<std::string, std::string>& options) {
  auto it = options.find("transport");
  if (it == options.end() || it->second == "nccl") return false;
  if (it->second == "copy_engine") return true;
  bad_option("transport", it->second, "nccl or copy_engine");
}

AllToAllAlgorithm all_to_all_algorithm(const std::map<std::string, std::string>& options, int sm_count) {
  AllToAllAlgorithm a;
  if (auto it = options.find("a2a"); it != options.end()) {
    if (it->second == "hierarchical") {
      a.hierarchical = true;
    } else if (it->second != "flat") {
      bad_option("a2a", it->second, "flat or hierarchical");
    }
  }
  if (auto it = options.find("a2a_sms"); it != options.end()) {
    const auto& v = it->second;
    const bool digits = !v.empty() && v.size() < 6 && std::all_of(v.begin(), v.end(), ::isdigit);
    a.sms = digits ? std::stoi(v) : 0;
    if (a.sms < 1 || a.sms >= sm_count)
      bad_option("a2a_sms", v, "an integer in [1, " + std::to_string(sm_count - 1) + "]");
  }
  return a;
}

std::vector<LayerMode> layer_modes(bool farskip, const std::map<std::string, std::string>& options,
                                   int layers) {
  // Unknown keys were refused against the schedule's declared options (check_options).
  std::string mode = "overlap", parts = "all", which = "all";
  bool shared_overlap = true;
  for (const auto& [key, value] : options) {
    if (key == "shared_overlap") {
      if (value != "on" && value != "off") bad_option(key, value, "on or off");
      shared_overlap = value == "on";
    } else if (key == "mode") {
      if (value != "overlap" && value != "simple") bad_option(key, value, "overlap or simple");
      mode = value;
    } else if (key == "parts") {
      if (value != "all" && value != "attn_only" && value != "mlp_only")
        bad_option(key, value, "all, attn_only or mlp_only");
      parts = value;
    } else if (key == "layers") {
      which = value;
    }
  }
  std::vector<LayerMode> modes(static_cast<std::size_t>(layers));
  for (auto& m : modes) m.shared_overlap = shared_overlap;
  if (!farskip) return modes;
  int first = 0, last = layers;  // converted: [first, last)
  if (which.rfind("first:", 0) == 0) {
    last = std::min(layers, parse_count("layers", which, which.substr(6)));
  } else if (which.rfind("last:", 0) == 0) {
    first = std::max(0, layers - parse_count("layers", which, which.substr(5)));
  } else if (which != "all") {
    bad_option("layers", which, "all, first:N or last:N");
  }
  for (int l = first; l < last; ++l) {
    auto& m = modes[static_cast<std::size_t>(l)];
    m.skip_attn = parts != "mlp_only";
    m.skip_mlp = parts != "attn_only";
    m.overlap = mode == "overlap";
  }
  return modes;
}

}  // namespace moesim::schedules::detail
