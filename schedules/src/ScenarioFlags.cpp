#include "moesim/schedules/ScenarioFlags.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <sstream>

#include "moesim/common/Error.hpp"
#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/hwprofiles/ProfileEnums.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/sim/BackendName.hpp"

namespace moesim::schedules {

namespace {

constexpr std::int64_t kMaxCount = std::int64_t{1}
                                   << 20;  // --ep, --tp, --dp, --nodes, --layers, --mbs, --seq
constexpr int kMaxDegree = 4096;
constexpr std::int64_t kMaxMicroBatches = 4096;  // a step of more is a longer program than any run needs

[[noreturn]] void bad(const std::string& flag, const std::string& value, const std::string& expected) {
  throw ConfigError("", "--" + flag, "= \"" + value.substr(0, 40) + "\": expected " + expected);
}

std::int64_t integer(const std::string& flag, const std::string& text, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    bad(flag, text, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

double finite(const std::string& flag, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < lo || v > hi) {
    std::ostringstream range;
    range << "a number in [" << lo << ", " << hi << "]";
    bad(flag, text, range.str());
  }
  return v;
}

bool boolean(const std::string& flag, const std::string& text) {
  if (text == "true" || text == "1" || text == "on") return true;
  if (text == "false" || text == "0" || text == "off") return false;
  bad(flag, text, "true or false");
}

using Setter = std::function<void(ScenarioFlags&, const std::string&, const std::string&)>;

Setter text(std::string ScenarioFlags::*field) {
  return [field](ScenarioFlags& f, const std::string&, const std::string& v) { f.*field = v; };
}
template <typename Int>
Setter count(Int ScenarioFlags::*field, std::int64_t lo) {
  return [field, lo](ScenarioFlags& f, const std::string& n, const std::string& v) {
    f.*field = static_cast<Int>(integer(n, v, lo, kMaxCount));
  };
}

/** Flag name -> how it is set, in the order `moesim simulate --help` lists them. */
const std::vector<std::pair<std::string, Setter>>& setters() {
  static const std::vector<std::pair<std::string, Setter>> table = {
      {"model", text(&ScenarioFlags::model)},
      {"hw", text(&ScenarioFlags::hw)},
      {"schedule", text(&ScenarioFlags::schedule)},
      {"phase", text(&ScenarioFlags::phase)},
      {"moe-comm", text(&ScenarioFlags::moe_comm)},
      {"ep", count(&ScenarioFlags::ep, 1)},
      {"tp", count(&ScenarioFlags::tp, 1)},
      {"dp", count(&ScenarioFlags::dp, 1)},
      {"nodes", count(&ScenarioFlags::nodes, 0)},
      {"tokens", count(&ScenarioFlags::tokens, 1)},
      {"mbs", count(&ScenarioFlags::mbs, 1)},
      {"seq", count(&ScenarioFlags::seq, 1)},
      {"layers", count(&ScenarioFlags::layers, 0)},
      {"routing", text(&ScenarioFlags::routing)},
      {"seed",
       [](ScenarioFlags& f, const std::string& n, const std::string& v) {
         f.seed = static_cast<std::uint64_t>(integer(n, v, 0, std::int64_t{1} << 62));
       }},
      {"dtype", text(&ScenarioFlags::dtype)},
      {"capacity-factor", [](ScenarioFlags& f, const std::string& n,
                             const std::string& v) { f.capacity_factor = finite(n, v, 0, 1000); }},
      {"engine", text(&ScenarioFlags::engine)},
      {"cluster", text(&ScenarioFlags::cluster)},
      {"opt",
       [](ScenarioFlags& f, const std::string&, const std::string& v) {
         std::stringstream parts(v);
         for (std::string kv; std::getline(parts, kv, ';');) f.opts.push_back(kv);
       }},
      {"per-rank",
       [](ScenarioFlags& f, const std::string& n, const std::string& v) { f.per_rank = boolean(n, v); }},
      {"degree", text(&ScenarioFlags::degree)},
      {"jitter", text(&ScenarioFlags::jitter)},
      {"repeat", [](ScenarioFlags& f, const std::string& n,
                    const std::string& v) { f.repeat = static_cast<int>(integer(n, v, 1, 100000)); }},
      {"attention", text(&ScenarioFlags::attention)},
      {"power", text(&ScenarioFlags::power)},
      {"experts", text(&ScenarioFlags::experts)},
      {"impl", text(&ScenarioFlags::impl)},
      {"host-speed", [](ScenarioFlags& f, const std::string& n,
                        const std::string& v) { f.host_speed = finite(n, v, 0.01, 100); }},
      {"host-probe", [](ScenarioFlags& f, const std::string& n,
                        const std::string& v) { f.host_probe = finite(n, v, 0.01, 1e6); }},
      {"pp", count(&ScenarioFlags::pp, 1)},
      {"vpp", count(&ScenarioFlags::vpp, 1)},
      {"micro-batches",
       [](ScenarioFlags& f, const std::string& n, const std::string& v) {
         f.micro_batches = static_cast<int>(integer(n, v, 1, kMaxMicroBatches));
       }},
      {"pp-schedule", text(&ScenarioFlags::pp_schedule)},
      {"optimizer", text(&ScenarioFlags::optimizer)},
      {"fb-overlap",
       [](ScenarioFlags& f, const std::string& n, const std::string& v) { f.fb_overlap = boolean(n, v); }},
      {"kv-len", count(&ScenarioFlags::kv_len, 0)},
      {"mtp", [](ScenarioFlags& f, const std::string& n, const std::string& v) { f.mtp = boolean(n, v); }},
      {"mtp-accept", [](ScenarioFlags& f, const std::string& n,
                        const std::string& v) { f.mtp_accept = finite(n, v, 0, 1); }},
  };
  return table;
}

int parse_degree(const std::string& text) {
  if (text == "auto") return 0;
  std::int64_t d = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec != std::errc() || end != text.data() + text.size() || d < 1 || d > kMaxDegree)
    bad("degree", text, "an integer in [1, " + std::to_string(kMaxDegree) + "] or auto");
  return static_cast<int>(d);
}

}  // namespace

void ScenarioFlags::set(const std::string& name, const std::string& value) {
  for (const auto& [flag, setter] : setters()) {
    if (flag == name) return setter(*this, name, value);
  }
  throw ConfigError("", "--" + name, "is not a flag of moesim simulate");
}

const std::vector<std::string>& ScenarioFlags::names() {
  static const std::vector<std::string> list = [] {
    std::vector<std::string> out;
    for (const auto& [flag, setter] : setters()) out.push_back(flag);
    return out;
  }();
  return list;
}

namespace {

// --host-speed, or the implementation profile's host probe over the target host's (--host-probe).
double host_speed_of(const ScenarioFlags& o, const cost::ImplementationProfile* impl) {
  if (o.host_probe <= 0) return o.host_speed;
  if (o.host_speed != 1) throw ConfigError("", "--host-probe", "give --host-speed or --host-probe, not both");
  if (impl == nullptr || impl->host_probe_us <= 0)
    throw ConfigError("", "--host-probe",
                      "needs an implementation profile with host.probe_us (one learned from a trace whose "
                      "record has host_probe_us)");
  const double speed = impl->host_probe_us / o.host_probe;
  if (!(speed >= 0.01 && speed <= 100))
    throw ConfigError("", "--host-probe",
                      "= " + std::to_string(o.host_probe) +
                          ": gives a host speed outside 0.01-100 against the " + "profile's probe " +
                          std::to_string(impl->host_probe_us) + " us");
  return speed;
}

}  // namespace

Scenario make_scenario(const ScenarioFlags& o) {
  Scenario s;
  s.engine = sim::parse_backend(o.engine, "--engine");
  s.model = models::load_model(o.model);
  s.hw = hw::load_profile(o.hw);
  if (!o.cluster.empty()) s.cluster = hw::load_cluster(o.cluster);
  s.schedule = o.schedule;
  s.parallel.ep = o.ep;
  s.parallel.tp = o.tp;
  s.parallel.dp = o.dp;
  s.parallel.nodes = o.nodes;
  s.parallel.moe_comm = parse_moe_comm(o.moe_comm);
  s.workload.phase = parse_phase(o.phase);
  // Each factor is at most 2^20, so the product cannot overflow; it must obey the --tokens limit too.
  if (o.tokens == 0 && s.workload.phase != Phase::DECODE && o.mbs * o.seq > kMaxTokensPerRank) {
    throw ConfigError("", "--mbs",
                      "x --seq = " + std::to_string(o.mbs) + " x " + std::to_string(o.seq) + " = " +
                          std::to_string(o.mbs * o.seq) + " tokens: must be <= " +
                          std::to_string(kMaxTokensPerRank) + " (the --tokens limit)");
  }
  s.workload.tokens = o.tokens > 0 ? o.tokens : o.mbs * o.seq;
  s.workload.seq_len = std::min(o.seq, s.workload.tokens);
  if (s.workload.phase == Phase::DECODE) {
    // Decode: --tokens (or --mbs) sequences per rank, each adding one token per step (two with MTP: the
    // next token and the drafted one, verified together) after --kv-len cached keys.
    const std::int64_t per_sequence = o.mtp ? 2 : 1;
    const std::int64_t batch = o.tokens > 0 ? o.tokens : o.mbs;
    s.workload.tokens = batch * per_sequence;
    s.workload.seq_len = per_sequence;
  }
  s.workload.micro_batches = o.micro_batches;
  s.workload.kv_len = o.kv_len;
  s.workload.mtp = o.mtp;
  s.workload.mtp_accept = o.mtp_accept;
  s.parallel.pp = o.pp;
  s.parallel.vpp = o.vpp;
  s.pp_schedule = o.pp_schedule;
  s.optimizer = parse_optimizer(o.optimizer);
  s.fb_overlap = o.fb_overlap;
  s.workload.dtype = models::parse_dtype(o.dtype);
  s.workload.routing = models::parse_routing(o.routing);
  s.workload.seed = o.seed;
  s.workload.capacity_factor = o.capacity_factor;
  s.workload.layers = o.layers;
  s.per_rank = o.per_rank;
  s.noise = parse_jitter(o.jitter, o.repeat);
  const auto attention = hw::try_parse_attention_impl(o.attention);
  if (!attention)
    throw ConfigError("", "--attention", "= \"" + o.attention + "\": expected fused or unfused");
  s.workload.attention = *attention;
  if (o.experts != "grouped" && o.experts != "loop")
    throw ConfigError("", "--experts", "= \"" + o.experts + "\": expected grouped or loop");
  s.workload.expert_loop = o.experts == "loop";
  if (o.power != "cap" && o.power != "off")
    throw ConfigError("", "--power", "= \"" + o.power + "\": expected cap or off");
  s.power_cap = o.power == "cap";
  s.degree = parse_degree(o.degree);
  if (o.impl != "fused")
    s.impl = std::make_shared<const cost::ImplementationProfile>(cost::load_implementation(o.impl));
  s.host_speed = host_speed_of(o, s.impl.get());
  for (const auto& kv : o.opts) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("", "--opt", "= \"" + kv + "\": expected KEY=VALUE");
    s.options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return s;
}

Scenario baseline_of(const Scenario& primary, const std::string& schedule) {
  Scenario other = primary;
  other.schedule = schedule;
  other.options.clear();
  other.noise = primary.noise;
  for (const char* shared : {"sync_splits", "shared_overlap", "allreduce"}) {
    if (auto it = primary.options.find(shared); it != primary.options.end()) other.options.insert(*it);
  }
  return other;
}

}  // namespace moesim::schedules
