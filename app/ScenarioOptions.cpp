#include "ScenarioOptions.hpp"

#include "FlagChecks.hpp"

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
  sub.add_option("--phase", o.phase,
                 "forward (training's, autograd recorded) | train (forward+backward) | prefill | decode "
                 "(--tokens or --mbs sequences per rank, one new token each, after --kv-len cached keys)")
      ->capture_default_str();
  sub.add_option("--moe-comm", o.moe_comm, "alltoall (Dispatch+Combine) | allreduce (vLLM style)")
      ->capture_default_str();
  sub.add_option("--ep", o.ep, "Expert-parallel group size (GPUs simulated)")
      ->capture_default_str()
      ->check(count);
  sub.add_option("--tp", o.tp, "Attention tensor parallelism (allreduce style: = --ep)")
      ->capture_default_str()
      ->check(count);
  sub.add_option(
         "--dp", o.dp,
         "Data-parallel replicas of the whole pipeline (scale tokens/s; with --optimizer their gradient "
         "collectives are simulated)")
      ->capture_default_str()
      ->check(count);
  sub.add_option("--pp", o.pp, "Pipeline stages, each an EP group of --ep GPUs")
      ->capture_default_str()
      ->check(count);
  sub.add_option("--vpp", o.vpp,
                 "Virtual stages (model chunks) per pipeline rank (--pp-schedule interleaved)")
      ->capture_default_str()
      ->check(count);
  sub.add_option(
         "--micro-batches", o.micro_batches,
         "Micro-batches per step and pipeline (gradient accumulation), each --mbs x --seq tokens per rank")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  sub.add_option("--pp-schedule", o.pp_schedule,
                 "Pipeline schedule: 1f1b | interleaved | dualpipe (moesim list "
                 "schedules)")
      ->capture_default_str();
  sub.add_option("--fb-overlap", o.fb_overlap,
                 "Steady-state forward and backward chunks as overlapped pairs, each hiding the other's "
                 "all-to-alls (Megatron's --overlap-moe-expert-parallel-comm)")
      ->capture_default_str();
  sub.add_option(
         "--optimizer", o.optimizer,
         "none (the layers' forward and backward only) | adam (gradient all-reduce over data-parallel "
         "groups, Adam) | zero1 (reduce-scatter, Adam on a 1/DP shard, parameter all-gather)")
      ->capture_default_str();
  sub.add_option("--nodes", o.nodes, "Nodes (default: the fewest that hold --ep GPUs)")
      ->check(CLI::Range(0, 1 << 20));
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
      ->check(CLI::Range(0, 1 << 20));
  sub.add_option("--kv-len", o.kv_len, "Decode: keys already in each sequence's KV cache")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  sub.add_option(
         "--mtp", o.mtp,
         "Decode: DeepSeek-V3's multi-token prediction (one drafted token verified per sequence and step)")
      ->capture_default_str();
  sub.add_option("--mtp-accept", o.mtp_accept,
                 "Decode with --mtp: acceptance rate of the drafted token (DeepSeek-V3 report: 0.85-0.9)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  sub.add_option("--routing", o.routing, "balanced | uniform | zipf:S | histogram:FILE.json")
      ->capture_default_str();
  sub.add_option("--seed", o.seed, "Seed of the routing draw")
      ->capture_default_str()
      ->check(integer_in(0, std::uint64_t{1} << 62));  // as sweep points take it
  sub.add_option("--dtype", o.dtype, "fp32 | bf16 | fp16 | fp8")->capture_default_str();
  sub.add_option("--capacity-factor", o.capacity_factor, "Expert capacity factor (0: dropless)")
      ->capture_default_str()
      ->check(finite_in(0, 1000));  // CLI::NonNegativeNumber accepts nan and 1e308
  sub.add_option("--engine", o.engine,
                 "analytic (the default) or simgrid (SimGrid's network model moves the data)")
      ->capture_default_str();
  sub.add_option("--cluster", o.cluster,
                 "Cluster file: nodes, NICs, switch fabric (hwprofiles/clusters/; default: one switch)");
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
  sub.add_option(
         "--impl", o.impl,
         "Implementation profile: how the software stack runs each op (kernels, host launch costs, host "
         "syncs): fused (the in-tree runner) | eager, grouped (hand-written PyTorch MoE layers: a loop over "
         "the experts, a grouped GEMM) | hf-eager, hf-grouped_mm (transformers' models as they ship) | a "
         "JSON file from moesim calibrate --torch-trace --impl-out; `moesim list impls` describes them")
      ->capture_default_str();
  sub.add_option("--host-speed", o.host_speed,
                 "Host CPU speed relative to the one the implementation's host costs were measured on (host "
                 "times divide by it)")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 100.0));
  sub.add_option(
         "--host-probe", o.host_probe,
         "The target host's probe (python3 -m torch_stacks.host_probe, us per op): host speed = the "
         "implementation profile's host.probe_us over it (learned profiles from records with host probes)")
      ->check(CLI::Range(0.01, 1e6));
}

}  // namespace moesim::app
