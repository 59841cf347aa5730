#include "ScenarioOptions.hpp"

#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileEnums.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"

namespace moesim::app {

void add_scenario_options(CLI::App& sub, ScenarioOptions& o) {
  // A flag given twice takes its last value, so scripts can append overrides to a base command.
  sub.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  const auto count = CLI::Range(1, 1 << 20);
  sub.add_option("--model", o.model, "Model: a shipped name (moesim list models) or a JSON file")
      ->capture_default_str();
  sub.add_option("--hw", o.hw, "Hardware profile: a shipped name (moesim list hw) or a JSON file")
      ->capture_default_str();
  sub.add_option("--schedule", o.schedule, "Schedule family (moesim list schedules)")->capture_default_str();
  sub.add_option("--phase", o.phase, "forward | train (forward+backward) | prefill")->capture_default_str();
  sub.add_option("--moe-comm", o.moe_comm, "alltoall (Dispatch+Combine) | allreduce (vLLM style)")
      ->capture_default_str();
  sub.add_option("--ep", o.ep, "Expert-parallel group size (GPUs simulated)")
      ->capture_default_str()
      ->check(count);
  sub.add_option("--tp", o.tp, "Attention tensor parallelism (allreduce style: = --ep)")
      ->capture_default_str()
      ->check(count);
  sub.add_option("--dp", o.dp, "Data-parallel replicas (scale tokens/s only)")
      ->capture_default_str()
      ->check(count);
  sub.add_option("--nodes", o.nodes, "Nodes (default: the fewest that hold --ep GPUs)")
      ->check(CLI::NonNegativeNumber);
  sub.add_option("--tokens", o.tokens,
                 "Tokens per rank (allreduce style: the replicated batch); default mbs x seq")
      ->check(count);
  sub.add_option("--mbs", o.mbs, "Micro-batch size (sequences per rank)")
      ->capture_default_str()
      ->check(count);
  sub.add_option("--seq", o.seq, "Sequence length (tokens form tokens/seq causal sequences)")
      ->capture_default_str()
      ->check(count);
  sub.add_option("--layers", o.layers, "Simulate the first N layers (default: all)")
      ->check(CLI::NonNegativeNumber);
  sub.add_option("--routing", o.routing, "balanced | uniform | zipf:S | histogram:FILE.json")
      ->capture_default_str();
  sub.add_option("--seed", o.seed, "Seed of the routing draw")->capture_default_str();
  sub.add_option("--dtype", o.dtype, "fp32 | bf16 | fp16 | fp8")->capture_default_str();
  sub.add_option("--capacity-factor", o.capacity_factor, "Expert capacity factor (0: dropless)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub.add_option("--engine", o.engine, "analytic (the SimGrid backend is not built yet)")
      ->capture_default_str();
  sub.add_option("--opt", o.opts, "Schedule option KEY=VALUE (repeatable; moesim list schedules)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub.add_flag("--per-rank", o.per_rank, "Simulate every rank even when all ranks are identical");
  sub.add_option("--degree", o.degree,
                 "foldmoe schedules (tutel, aaam, 1a1m, 1a1m-uniform): overlap degree d (micro-batches per "
                 "sequence), or auto to simulate d = 2..16 dividing seq/tp and keep the fastest")
      ->capture_default_str();
  sub.add_option("--jitter", o.jitter,
                 "Straggler/jitter delays: none | rank:MEDIAN_US,P95_US (each GPU starts late) | "
                 "op:MEDIAN_US,P95_US (every launch) | table2-vm | table2-hpc (FlashMoE Table 2 presets)")
      ->capture_default_str();
  sub.add_option("--repeat", o.repeat, "Monte-Carlo runs with jitter seeds seed..seed+N-1; prints p50/p95")
      ->capture_default_str();
  sub.add_option("--attention", o.attention,
                 "fused (flash attention) | unfused (QK^T, softmax and PV as separate kernels, as the layer "
                 "runner; needs the profile's efficiency.attention_unfused_fwd)")
      ->capture_default_str();
  sub.add_option("--power", o.power,
                 "cap (each GPU's compute slows until its mean power is at the profile's limit; needs the "
                 "profile's power section) | off")
      ->capture_default_str();
  sub.add_option(
         "--experts", o.experts,
         "grouped (one grouped GEMM per expert matrix) | loop (one GEMM per local expert, as the layer "
         "runner)")
      ->capture_default_str();
}

schedules::Scenario baseline_of(const schedules::Scenario& primary, const std::string& schedule) {
  schedules::Scenario other = primary;
  other.schedule = schedule;
  other.options.clear();
  other.noise = primary.noise;
  for (const char* shared : {"sync_splits", "shared_overlap"}) {
    if (auto it = primary.options.find(shared); it != primary.options.end()) other.options.insert(*it);
  }
  return other;
}

schedules::Scenario make_scenario(const ScenarioOptions& o) {
  if (o.engine != "analytic") {
    throw ConfigError("", "--engine",
                      "= \"" + o.engine + "\": only the analytic engine is available in this build");
  }
  schedules::Scenario s;
  s.model = models::load_model(o.model);
  s.hw = hw::load_profile(o.hw);
  s.schedule = o.schedule;
  s.parallel.ep = o.ep;
  s.parallel.tp = o.tp;
  s.parallel.dp = o.dp;
  s.parallel.nodes = o.nodes;
  s.parallel.moe_comm = schedules::parse_moe_comm(o.moe_comm);
  s.workload.phase = schedules::parse_phase(o.phase);
  s.workload.tokens = o.tokens > 0 ? o.tokens : o.mbs * o.seq;
  s.workload.seq_len = std::min(o.seq, s.workload.tokens);
  s.workload.dtype = models::parse_dtype(o.dtype);
  s.workload.routing = models::parse_routing(o.routing);
  s.workload.seed = o.seed;
  s.workload.capacity_factor = o.capacity_factor;
  s.workload.layers = o.layers;
  s.per_rank = o.per_rank;
  s.noise = schedules::parse_jitter(o.jitter, o.repeat);
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
  if (o.degree != "auto") {
    std::size_t used = 0;
    int d = 0;
    try {
      d = std::stoi(o.degree, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != o.degree.size() || d < 1)
      throw ConfigError("", "--degree", "= \"" + o.degree + "\": expected a positive integer or auto");
    s.degree = d;
  }
  for (const auto& kv : o.opts) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("", "--opt", "= \"" + kv + "\": expected KEY=VALUE");
    s.options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return s;
}

}  // namespace moesim::app
