#include "moesim/validate/TorchStacks.hpp"

#include <filesystem>
#include <map>

#include "TorchStackOps.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/schedules/Simulation.hpp"
#include "moesim/traces/TraceFile.hpp"
#include "moesim/validate/Measured.hpp"

namespace moesim::validate {
namespace {

namespace fs = std::filesystem;

models::AttentionType attention_type(const traces::TorchStackRecord& r) {
  if (r.shape.attention == "mla") return models::AttentionType::MLA;
  if (r.shape.attention == "mha") return models::AttentionType::MHA;
  if (r.shape.attention == "gqa") return models::AttentionType::GQA;
  throw ConfigError(r.file, "/config/shape/attention/kind",
                    "= \"" + r.shape.attention + "\": expected mha, gqa or mla");
}

// The model the stack built: the spec's with the record's widths. kernels/torch_stacks' stacks make every
// layer an MoE layer; a user's model (a record naming its spec file) has the layers its spec says.
models::ModelSpec stack_model(const traces::TorchStackRecord& r) {
  models::ModelSpec m = models::load_model(r.model_source());
  const traces::StackShape& s = r.shape;
  m.hidden = s.hidden;
  m.moe.experts = s.experts;
  m.moe.top_k = s.top_k;
  m.moe.expert_ffn = s.expert_ffn;
  m.moe.shared_experts = s.shared_experts;
  m.moe.shared_ffn = s.shared_ffn;
  m.attention.type = attention_type(r);
  m.attention.heads = s.heads;
  m.attention.kv_heads = s.kv_heads;
  m.attention.head_dim = s.head_dim;
  m.attention.kv_lora_rank = s.kv_lora_rank;
  m.attention.q_lora_rank = s.q_lora_rank;
  m.attention.rope_head_dim = s.rope_head_dim;
  m.attention.v_head_dim = s.v_head_dim;
  // transformers builds the model's own attention, QK-norm included; kernels/torch_stacks' layers had none
  // until their records said which they ran.
  m.attention.qk_norm = s.qk_norm.value_or(r.implementation == "transformers" && m.attention.qk_norm);
  // Likewise the shared experts' gate (Qwen2-MoE's), which kernels/torch_stacks' layers build since
  // 2026-11-29.
  m.moe.shared_gate = s.shared_gate.value_or(r.implementation == "transformers" && m.moe.shared_gate);
  // kernels/torch_stacks' layers attend over the whole sequence; transformers runs the model's own windows.
  if (r.implementation != "transformers") m.attention.window = models::AttentionWindow::FULL;
  if (r.model_spec.empty()) {
    m.dense_layers = 0;
    m.moe_every = 1;
  }
  return m;
}

/**
 * The stacks' schedules (kernels/torch_stacks/stack.py) and the simulator scenario each runs: the stacks'
 * regular waits for Combine before the shared experts. FarSkip speedups are against the baseline.
 */
struct StackSchedule {
  const char* stack;
  const char* schedule;
  std::vector<std::pair<const char*, const char*>> options;
  bool baseline;
};

const StackSchedule& stack_schedule(const traces::TorchStackRecord& r) {
  static const std::vector<StackSchedule> table = {{"regular", "regular", {{"shared_overlap", "off"}}, true},
                                                   {"farskip", "farskip", {}, false}};
  for (const StackSchedule& s : table)
    if (r.schedule == s.stack) return s;
  throw ConfigError(r.file, "/config/schedule",
                    "= \"" + r.schedule +
                        "\": expected one of the stacks' schedules "
                        "(regular, farskip)");
}

// The shipped profile of a style: transformers' models have their own (their layers and the model's own ops
// around them).
std::string shipped_profile(const std::string& style) {
  if (style == "hf-eager" || style == "hf-grouped_mm") return style;
  return style == "loop" ? "eager" : "grouped";
}

// The folder of a record: records of one folder come from one device call.
std::string pair_key(const traces::TorchStackRecord& r) {
  return fs::path(r.file).parent_path().string() + "\n" + r.config_key();
}

}  // namespace

std::string ImplementationChoice::for_record(const std::string& style, const std::string& hw) const {
  if (!all.empty()) return all;
  if (auto on_hw = by_style_hw.find({style, hw}); on_hw != by_style_hw.end()) return on_hw->second;
  auto it = by_style.find(style);
  return it != by_style.end() ? it->second : shipped_profile(style);
}

ImplementationChoice parse_implementation_choice(const std::vector<std::string>& values) {
  ImplementationChoice choice;
  for (const std::string& v : values) {
    const auto eq = v.find('=');
    const std::string profile = eq == std::string::npos ? v : v.substr(eq + 1);
    const std::string key = eq == std::string::npos ? "" : v.substr(0, eq);
    const auto at = key.find('@');
    if (profile.empty() || (eq != std::string::npos && key.empty()) ||
        (at != std::string::npos && (at == 0 || at + 1 == key.size())))
      throw ConfigError("", "--impl", "= \"" + v + "\": expected PROFILE, STYLE=PROFILE or STYLE@HW=PROFILE");
    if (eq == std::string::npos) {
      if (!choice.all.empty())
        throw ConfigError("", "--impl", "= \"" + v + "\": a profile for all records is given twice");
      choice.all = profile;
    } else if (at == std::string::npos) {
      choice.by_style[key] = profile;
    } else {
      choice.by_style_hw[{key.substr(0, at), key.substr(at + 1)}] = profile;
    }
  }
  return choice;
}

std::string TorchStackComparison::label() const {
  const auto& r = record;
  return r.model + " " + r.style + " EP" + std::to_string(r.ep) + " T" + std::to_string(r.tokens) + " L" +
         std::to_string(r.layers) + " " + r.phase + " " + r.schedule;
}

std::vector<traces::TorchStackRecord> find_torch_stack_records(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (!fs::is_directory(p)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(p))
      if (entry.is_regular_file() && entry.path().extension() == ".json")
        found.push_back(entry.path().string());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  std::vector<traces::TorchStackRecord> records;
  for (const std::string& f : files) {
    const nlohmann::json document = parse_json_text(traces::read_trace_text(f), f);
    if (traces::is_torch_stack_record(document))
      records.push_back(traces::torch_stack_record_from_json(document, f));
  }
  return records;
}

schedules::Scenario torch_stack_scenario(const traces::TorchStackRecord& r, const hw::HwProfile& hw,
                                         std::shared_ptr<const cost::ImplementationProfile> impl) {
  using namespace schedules;
  Scenario s;
  s.model = stack_model(r);
  s.hw = hw;
  s.parallel.ep = r.ep;
  s.parallel.nodes = 1;
  s.workload.phase = r.phase == "train" ? Phase::TRAIN : Phase::FORWARD;
  s.workload.tokens = r.tokens;
  s.workload.seq_len = std::min(r.seq, r.tokens);
  s.workload.layers = r.layers;
  s.workload.seed = r.seed;
  // The stacks' natural routing is the router's own top-k on random weights: close to uniform.
  s.workload.routing = models::parse_routing(r.routing == "natural" ? "uniform" : r.routing);
  s.workload.expert_loop = shipped_profile(r.style) == "eager";
  const StackSchedule& schedule = stack_schedule(r);
  s.schedule = schedule.schedule;
  for (const auto& [key, value] : schedule.options) s.options[key] = value;
  s.impl = std::move(impl);
  return s;
}

std::vector<TorchStackComparison> compare_torch_stacks(const std::vector<traces::TorchStackRecord>& records,
                                                       const TorchStackOptions& o) {
  std::map<std::string, hw::HwProfile> profiles;
  std::map<std::string, std::shared_ptr<const cost::ImplementationProfile>> impls;
  std::vector<TorchStackComparison> out;
  std::map<std::string, std::pair<double, double>> regular;  // pair key -> measured, predicted
  for (const traces::TorchStackRecord& r : records) {
    if (r.status != "ok") continue;
    const std::string hw_name = o.hw_override.empty() ? profile_for_device(r.device) : o.hw_override;
    if (hw_name.empty())
      throw ConfigError(r.file, "/ranks/0/gpu_before/name",
                        "= \"" + r.device + "\" matches no shipped profile: give --hw NAME|FILE");
    auto hw = profiles.find(hw_name);
    if (hw == profiles.end()) hw = profiles.emplace(hw_name, hw::load_profile(hw_name)).first;
    const std::string impl_name = o.impl.for_record(r.style, hw_name);
    auto impl = impls.find(impl_name);
    if (impl == impls.end()) {
      auto loaded = std::make_shared<const cost::ImplementationProfile>(cost::load_implementation(impl_name));
      impl = impls.emplace(impl_name, loaded->is_fused() ? nullptr : loaded).first;
    }
    schedules::Scenario scenario = torch_stack_scenario(r, hw->second, impl->second);
    const bool probed =
        o.host_from_probe && impl->second && impl->second->host_probe_us > 0 && r.host_probe_us_mean > 0;
    if (probed) scenario.host_speed = impl->second->host_probe_us / r.host_probe_us_mean;
    const schedules::SimulationResult result = schedules::simulate(scenario);
    TorchStackComparison c;
    c.record = r;
    c.host_speed = scenario.host_speed;
    c.host_from_probe = probed;
    c.hw = hw->second.name;
    c.impl = impl->second ? impl->second->name : "fused";
    c.predicted_ms = result.step_ms;
    if (o.ops && !r.traces.empty()) c.ops = detail::compare_ops(r, result);
    if (stack_schedule(r).baseline) regular[pair_key(r)] = {r.step_ms_p50, result.step_ms};
    out.push_back(std::move(c));
  }
  for (TorchStackComparison& c : out) {
    auto it = regular.find(pair_key(c.record));
    if (stack_schedule(c.record).baseline || it == regular.end()) continue;
    // An interleaved pair states its speedup (median over rounds, robust to the host's speed moving
    // mid-run); a pair timed as separate configurations has only the ratio of its p50s.
    c.measured_speedup =
        c.record.speedup ? c.record.speedup->estimate : it->second.first / c.record.step_ms_p50;
    c.predicted_speedup = it->second.second / c.predicted_ms;
  }
  return out;
}

}  // namespace moesim::validate
