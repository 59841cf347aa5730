#pragma once
/** @file Everything one simulation needs: model, hardware, parallelism, workload and schedule choice. */
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/hwprofiles/Cluster.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"
#include "moesim/models/DType.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/models/Routing.hpp"
#include "moesim/sim/Jitter.hpp"
#include "moesim/sim/Types.hpp"

namespace moesim::schedules {

/** @brief What part of the model's life is simulated. */
enum class Phase { FORWARD, TRAIN, PREFILL, DECODE };

/** @brief How MoE layers communicate. */
enum class MoeComm {
  ALLTOALL,   ///< Megatron/DeepEP style: Dispatch and Combine all-to-alls over the EP group
  ALLREDUCE,  ///< vLLM/SGLang style: activations replicated, experts split, one all-reduce after MoE
};

/** @brief Parallel layout. Ranks of one EP group are consecutive GPUs, node-major. */
struct Parallelism {
  int ep = 1;
  /**
   * attention tensor parallelism (allreduce style: equals ep; foldmoe schedules: TP+SP groups of tp
   * consecutive GPUs inside a node, ep/tp of them in the EP group, i.e. the paper's data parallelism)
   */
  int tp = 1;
  int dp = 1;     ///< data-parallel replicas of the whole pipeline (ep x pp GPUs each)
  int nodes = 0;  ///< 0: as many as the EP group needs
  MoeComm moe_comm = MoeComm::ALLTOALL;
  int pp = 1;   ///< pipeline stages, each an EP group of its own (stage-major ranks: stage s holds s·ep..)
  int vpp = 1;  ///< virtual stages (model chunks) per pipeline rank (interleaved 1F1B)
};

/** @brief What the optimizer step of a training step does (--optimizer). */
enum class Optimizer {
  NONE,   ///< the step is the layer stack's forward and backward only
  ADAM,   ///< gradients all-reduced over the data-parallel groups, then Adam on every local weight
  ZERO1,  ///< ZeRO-1 / distributed optimizer: reduce-scatter, Adam on a 1/DP shard, parameter all-gather
};

/** @brief The work of one step. */
struct Workload {
  Phase phase = Phase::TRAIN;
  /**
   * per rank (allreduce style: the replicated batch every rank holds; foldmoe schedules with tp > 1: the
   * tokens of one TP group, of which each rank holds tokens/tp under sequence parallelism)
   */
  std::int64_t tokens = 0;
  std::int64_t seq_len = 0;  ///< tokens form tokens/seq_len causal sequences
  models::DType dtype = models::DType::BF16;
  models::RoutingSpec routing;
  std::uint64_t seed = 1;
  double capacity_factor = 0;  ///< <= 0: no capacity limit (dropless)
  int layers = 0;              ///< 0: the model's count; N: the first N layers
  /** fused (FlashAttention-style, the profile's attention_fwd) or unfused (its attention_unfused_fwd) */
  hw::AttentionImpl attention = hw::AttentionImpl::FUSED;
  /** routed experts as one GEMM per expert (true) or one grouped GEMM per projection (false) */
  bool expert_loop = false;
  /** micro-batches of one step per pipeline (gradient accumulation steps), each `tokens` per rank */
  int micro_batches = 1;
  /** decode: keys already in the KV cache of every sequence (each sequence decodes one token per step) */
  std::int64_t kv_len = 0;
  /** decode: DeepSeek-V3's multi-token prediction (one extra token drafted and verified per sequence) */
  bool mtp = false;
  /** decode with MTP: probability that the drafted token is accepted (DeepSeek-V3 report §5.4.3: 85-90%) */
  double mtp_accept = 0.85;
};

/**
 * @brief Straggler/jitter injection and Monte-Carlo repetitions (`--jitter`, `--repeat`). With a
 * preset (FlashMoE Table 2), median and p95 are multiples (ratio − 1) of the scenario's alone-time
 * Dispatch all-to-all, filled in by simulate(); otherwise they are given in microseconds.
 */
struct Noise {
  sim::JitterScope scope = sim::JitterScope::NONE;
  double median_us = 0;
  double p95_us = 0;
  std::string preset;  ///< "", "table2-vm" or "table2-hpc"
  int repeat = 1;      ///< runs; run j uses jitter seed workload.seed + j
};

/** @brief A complete scenario. */
struct Scenario {
  models::ModelSpec model;
  hw::HwProfile hw;
  /// --cluster: the nodes' NICs and switch fabric (absent: one non-blocking switch, --nodes alone)
  std::optional<hw::ClusterSpec> cluster;
  Parallelism parallel;
  Workload workload;
  std::string schedule = "regular";
  std::map<std::string, std::string> options;  ///< schedule options (--opt KEY=VALUE)
  bool per_rank = false;                       ///< force full per-rank simulation
  /// lower a GPU's compute speed while its mean power would exceed the profile's limit (needs the
  /// profile's "power" section; off = clocks never drop)
  bool power_cap = true;
  Noise noise;  ///< jitter and repetitions (default: none, one run)
  /**
   * foldmoe schedules (tutel, aaam, 1a1m, 1a1m-uniform): the overlap degree d, i.e. the MoE micro-batches
   * per sequence; 0 = auto (simulate every candidate and keep the fastest). megatron always runs d = 1;
   * other schedules need 0.
   */
  int degree = 0;
  /**
   * how the software stack runs each op (`--impl`): its kernels, host launch costs and host syncs; nullptr
   * means fused (the in-tree runner's kernels)
   */
  std::shared_ptr<const cost::ImplementationProfile> impl;
  /**
   * host speed relative to the CPU the host costs were measured on (`--host-speed`): every host launch and
   * host op takes its time divided by this
   */
  double host_speed = 1;
  sim::Backend engine = sim::Backend::ANALYTIC;  ///< --engine: analytic | simgrid
  /** pipeline schedule (--pp-schedule): how stages order their micro-batches' chunks */
  std::string pp_schedule = "1f1b";
  /**
   * merge each steady-state forward chunk with a backward chunk and interleave their sub-blocks, so each
   * hides the other's all-to-alls (Megatron's --overlap-moe-expert-parallel-comm); DualPipe always does
   */
  bool fb_overlap = false;
  Optimizer optimizer = Optimizer::NONE;
};

/** @brief The scenario's implementation profile's name ("fused" when it has none). */
std::string implementation_name(const Scenario& s);

/**
 * @brief What every forward host cost is charged for waiting on the slowest of the EP group's hosts: the
 * implementation profile's straggle_factor(rank_spread, EP); 1 without a profile.
 */
double host_straggle(const Scenario& s);

std::string to_string(Phase phase);
std::string to_string(Optimizer optimizer);
/** @brief Parses none|adam|zero1; ConfigError at "--optimizer" otherwise. */
Optimizer parse_optimizer(const std::string& text);
/** @brief Parses forward|train|prefill|decode; ConfigError at "--phase" otherwise. */
Phase parse_phase(const std::string& text);
std::string to_string(MoeComm comm);
/** @brief Parses alltoall|allreduce; ConfigError at "--moe-comm" otherwise. */
MoeComm parse_moe_comm(const std::string& text);

/** @brief Layers to simulate (workload.layers or the model's count). */
int simulated_layers(const Scenario& s);
/** @brief GPUs that run one copy of the layer (the EP group). */
int group_size(const Scenario& s);
/**
 * @brief The scenario is a whole step rather than one layer stack: pipeline stages, several micro-batches,
 * or an optimizer with its data-parallel collectives. Such scenarios are built by the step builder from
 * the layer schedule's chunks.
 */
bool is_step(const Scenario& s);
/** @brief GPUs the scenario occupies: ep x pp x dp. */
int total_gpus(const Scenario& s);
/** @brief Nodes the group spans (parallel.nodes, or the fewest that hold it). */
int node_count(const Scenario& s);

/**
 * @brief Rejects impossible scenarios with one line naming the flag: EP not dividing the experts,
 * tokens not divisible by seq, more GPUs than nodes hold, TP not dividing heads... (ScheduleError).
 */
void validate(const Scenario& s);

/**
 * @brief Parses `--jitter`: none | rank:MEDIAN_US,P95_US | op:MEDIAN_US,P95_US | table2-vm | table2-hpc
 * (presets are per-rank straggler delays); ConfigError at "--jitter" otherwise.
 */
Noise parse_jitter(const std::string& text, int repeat);

/** @brief The scenario's Noise with a preset turned into microseconds (see Noise.cpp). */
Noise resolve_noise(const Scenario& s);

}  // namespace moesim::schedules
