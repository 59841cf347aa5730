#pragma once
/**
 * @file How one software stack runs each op of moesim's layer DAG (an implementation profile, `--impl`):
 * per (op, pass) the kernels it launches and the host synchronisations it makes, each as a template that
 * holds at any configuration (a count rule and a time rule by kernel class), and the host time eager
 * frameworks spend before each launch. The format is documented in cost/IMPL_FORMAT.md.
 *
 * `fused` is the empty profile: every op keeps the in-tree runner's kernel inventory
 * (models::layer_op_kernels).
 */
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "moesim/models/LayerOps.hpp"
#include "moesim/models/ModelSpec.hpp"

namespace moesim::cost {

/** @brief Which pass a profile entry describes: autograd does not split backward into DGRAD and WGRAD. */
enum class ImplPass { FORWARD, BACKWARD };

/** @brief What one step of an op is. */
enum class ImplStepKind {
  GEMM,       ///< moesim's GEMM(s) of the op (its shape formulas), at `efficiency` times the profile's rate
  ATTENTION,  ///< moesim's attention kernel of the op, its time times `time_factor`
  MEMORY,     ///< bandwidth-bound kernel moving bytes_per_element · rows · width bytes
  FIXED,      ///< a kernel whose time does not depend on the configuration (memsets, scans of counts)
  SYNC,       ///< the host waits until the compute stream has drained (.item(), .tolist(), nonzero)
};

/** @brief How often a step runs in one call of its op. */
enum class ImplRepeat {
  ONCE,        ///< once per call
  PER_EXPERT,  ///< once per local expert that received rows (consecutive PER_EXPERT steps form the loop body)
};

/** @brief Which rows a MEMORY step's traffic scales with. */
enum class ImplRows {
  NONE,           ///< one row: the traffic is fixed
  TOKENS,         ///< the op's token rows
  ROUTED_ROWS,    ///< token-expert rows this rank routes (tokens · top_k)
  RECEIVED_ROWS,  ///< rows the local experts process (the sum over local experts)
  EXPERT_ROWS,    ///< the rows of the expert of this iteration (PER_EXPERT steps only)
};

/** @brief Which width of the model a MEMORY step's traffic scales with. */
enum class ImplWidth {
  ONE,            ///< 1
  HIDDEN,         ///< the model width
  EXPERTS,        ///< routed experts (router logits)
  LOCAL_EXPERTS,  ///< experts this rank holds
  TOP_K,          ///< experts per token
  EXPERT_FFN,     ///< one routed expert's intermediate width
  SHARED_FFN,     ///< shared_experts · shared_ffn
  DENSE_FFN,      ///< the dense FFN's intermediate width
  Q_WIDTH,        ///< local query heads · qk head width
  KV_WIDTH,       ///< local key/value heads · qk head width (MLA: the kv latent rank)
  V_WIDTH,        ///< local query heads · value head width
  HEADS,          ///< local query heads
  /// local experts · expert_ffn · hidden: the elements of one stacked routed-expert weight ([E, F, H]), which
  /// an implementation that indexes it per expert makes autograd zero and accumulate whole per expert
  EXPERT_WEIGHTS,
  /// expert_ffn · hidden: the elements of one routed expert's weight matrix, whose gradient slice autograd
  /// copies per expert when an implementation indexes a stacked weight per expert
  EXPERT_WEIGHT,
  /// local query heads · the rotary part of a head (MLA: rope_head_dim; else the whole head): what RoPE
  /// rotates of the queries
  Q_ROPE,
  /// the rotary part of the keys (MLA: rope_head_dim, one key shared by all heads; else kv_width)
  K_ROPE,
};

/** @brief When a step runs. */
enum class ImplCondition {
  ALWAYS,
  MULTI_RANK,   ///< only when the EP group has more than one rank (split-size exchange and its copies)
  SINGLE_RANK,  ///< only when it has one (a learned op's form at EP 1 where its trace ran EP > 1)
  QK_NORM,      ///< only when the model normalizes queries and keys per head (models' attention.qk_norm)
  SHARED_GATE,  ///< only when the model gates its shared experts' output per token (models' moe.shared_gate)
};

/**
 * @brief A rule of a grouped-GEMM kernel's row tiling: a launch whose mean rows per active group is at most
 * `max_mean_rows` (0: any) computes every group in whole tiles of `rows` rows.
 */
struct ImplRowTile {
  std::int64_t max_mean_rows = 0;
  std::int64_t rows = 1;
};

/**
 * @brief How a grouped-GEMM kernel family spends its time group by group (`grouped` of a GEMM step): each
 * group is its own roofline. Forward and dgrad compute the group's rows rounded up to whole row tiles, or
 * stream its bytes (its expert's weights and its rows), whichever takes longer; wgrad, whose reduction runs
 * over the group's rows, computes them and then stores the expert's weight gradient, one after the other (the
 * store ends each output tile). Bytes move at the kernel's own rate or the GPU's memory curve, whichever is
 * slower: the kernel's SMs, not the HBM, set its pace on a GPU with HBM to spare.
 */
struct ImplGroupedGemm {
  std::vector<ImplRowTile> row_tiles;  ///< the first rule that admits the launch's mean rows applies
  double stream_bytes_per_s = 0;       ///< > 0
  double store_bytes_per_s = 0;        ///< > 0
};

/** @brief One kernel or host synchronisation of an op, in launch order. */
struct ImplStep {
  ImplStepKind kind = ImplStepKind::FIXED;
  ImplRepeat repeat = ImplRepeat::ONCE;
  ImplCondition when = ImplCondition::ALWAYS;
  /** @brief What the stack calls it (a kernel or CPU op name), for people and the per-op report. */
  std::string label;
  /**
   * @brief GEMM: which of moesim's GEMMs of the op: "*" all of the pass in moesim's order, else a kernel name
   * without the op prefix ("fc1", "fc2.wgrad", "qkv_proj.dgrad").
   */
  std::string gemm = "*";
  /** @brief GEMM: rate relative to the hardware profile's (time divides by it); > 0. */
  double efficiency = 1;
  /**
   * @brief GEMM: time added to each of its kernels beyond the hardware profile's, whatever its size (ns); a
   * negative one takes that much off the table's time of each, down to an empty kernel's.
   */
  double kernel_overhead_ns = 0;
  /** @brief GEMM: how its grouped launches over the local experts spend their time; none: as one GEMM. */
  std::optional<ImplGroupedGemm> grouped;
  /** @brief ATTENTION: time relative to moesim's attention model; > 0. */
  double time_factor = 1;
  /** @brief MEMORY: HBM bytes per (row · width) element. */
  double bytes_per_element = 0;
  /**
   * @brief MEMORY: the most bytes per second the kernel moves whatever the GPU's HBM, 0 for no cap. PyTorch's
   * generic elementwise path (a broadcast or strided operand) streams at about the same rate on H100 and
   * H200 (data/calibration/2026-11-27-*-elementwise-paths): its SMs, not the HBM, set the pace.
   */
  double max_bytes_per_s = 0;
  /**
   * @brief MEMORY: the least time the kernel takes at any size (ns), 0 for none beyond kernel_min. PyTorch's
   * elementwise kernels take a flat time up to a few hundred rows, 0.7-2 us above an empty kernel's
   * (data/calibration/2026-11-28-nvidia-h200-elementwise-floor); above it the bytes set the time.
   */
  double floor_ns = 0;
  /**
   * @brief MEMORY: atomic adds per (row · width) element, 0 for none. A bf16 index_add_ or scatter_add_ adds
   * each source element atomically, and the GPU's atomic-add rate (hw::GpuSpec::atomic_add_bf16_per_s), not
   * its HBM, sets its time above a few hundred rows (data/calibration/2026-11-27-*-index-add*).
   */
  double atomic_adds_per_element = 0;
  /**
   * @brief MEMORY: from these bytes up the kernel keeps the rate the memory-efficiency curve gives at them
   * (its traced size, for a learned kernel), 0 for none. The curve's rise over tens to hundreds of MB comes
   * from the mix of kernels it was fitted on (memory_bench's RMSNorm streams at 3.0-3.7 TB/s at 34 MB to 2
   * GB, its add at 3.9-4.4, on one H200: data/calibration/2026-11-26-nvidia-h200-x4/memory.json), not from
   * size: one PyTorch kernel streams at one rate from 8 to 270 MB (Qwen3's and Mixtral's RMSNorm kernels in
   * the 2026-11-28 H200 traces), and carried up the curve it ran 20-30% short.
   */
  double steady_bytes = 0;
  ImplRows rows = ImplRows::NONE;
  ImplWidth width = ImplWidth::ONE;
  /** @brief FIXED: the kernel's time (ns). */
  double time_ns = 0;
  /** @brief Host time the stack spends before this step: dispatch, Python, the launch itself (ns). */
  double host_ns = 0;
  /**
   * @brief Host time added per chunk of the EP exchange (ns): chunks are the EP degree times the local
   * experts, one per (source rank, local expert), as a step that splits the received rows into them and
   * concatenates them in another order (Megatron's sort_chunks_by_idxs) spends per view and list item.
   */
  double host_ns_per_chunk = 0;
};

/** @brief The steps of one op in one pass, for models of one attention type (or any). */
struct ImplOpEntry {
  models::LayerOp op = models::LayerOp::ATTN_NORM;
  ImplPass pass = ImplPass::FORWARD;
  /** @brief Attention ops: the attention type the steps were learned on; empty = any. */
  std::optional<models::AttentionType> attention;
  std::vector<ImplStep> steps;
  /** @brief JSON pointer of the entry in its file (for messages). */
  std::string pointer;
};

/** @brief Where a profile comes from. */
struct ImplProvenance {
  std::string source;  ///< "built-in" or "learned"
  std::string description;
  std::string hw_profile;           ///< hardware profile its rates are relative to
  std::vector<std::string> traces;  ///< learned: the traces
  std::string date;
};

/** @brief An implementation profile (see the file comment). */
struct ImplementationProfile {
  std::string name;
  ImplProvenance provenance;
  /** @brief CPU its host costs were measured on (the records' provenance.host.cpu_model); "" unknown. */
  std::string host_cpu;
  /**
   * @brief Spread of the host's issue speed between ranks that meet at collectives, as the standard deviation
   * of a normal factor around 1 (0: every rank issues alike). Host-bound ranks wait for the slowest at every
   * collective, so a symmetric simulation charges each forward host cost straggle_factor(rank_spread, ranks)
   * times (measured on Python's issue of forward ops; backward host costs keep factor 1).
   */
  double rank_spread = 0;
  /**
   * @brief The host probe (kernels/torch_stacks/host_probe.py, microseconds per eager op) of the process
   * whose host costs these are: a learned profile's traced run; 0 unknown. A host whose probe reads P runs
   * this profile's host costs at speed host_probe_us / P.
   */
  double host_probe_us = 0;
  /**
   * @brief Host time to free a forward's autograd graph, per forward kernel launch (each launch taken as one
   * graph node), paid once when a forward that records autograd ends with no backward (`--phase forward`:
   * dropping its output frees the whole graph; a backward frees it as it goes). 0: the base's, else none
   * (the fused runner records no graph). data/calibration/2026-11-29-nvidia-h200-graph-free.
   */
  double graph_free_us_per_launch = 0;
  /** @brief Per (op, pass) entries; an op without one keeps the fused inventory. */
  std::vector<ImplOpEntry> ops;
  /** @brief Host time to launch a collective, by name ("dispatch", "combine", "dispatch.bwd", "combine.bwd").
   */
  std::map<std::string, double> collective_host_ns;
  /** @brief File it was read from ("" for fused). */
  std::string file;
  /**
   * @brief The profile that answers for (op, pass) entries and collectives this one lacks (a learned
   * profile's built-in of the same style: ops the traced model did not have, another attention type);
   * nullptr: fused.
   */
  std::shared_ptr<const ImplementationProfile> base;

  /** @brief True for `fused`: no entry, every op as the in-tree runner. */
  bool is_fused() const { return ops.empty() && collective_host_ns.empty() && !base; }
  /**
   * @brief The entry for `op` in `pass` on a model of attention type `attention`: one naming that type before
   * one for any type; nullptr when the profile has none (the op keeps the fused inventory).
   */
  const ImplOpEntry* find(models::LayerOp op, ImplPass pass, models::AttentionType attention) const;
  /** @brief graph_free_us_per_launch, or the base's where this profile gives none (0: none). */
  double graph_free_us() const;
  /** @brief Host time to launch `collective` ("dispatch"...), when the profile gives one. */
  std::optional<double> collective_host(const std::string& collective) const;
};

/** @brief The empty profile: today's fused inventory everywhere. */
ImplementationProfile fused_implementation();

/**
 * @brief Loads `name_or_file`: "fused", a shipped profile (`<data dir>/cost/implementations/NAME.json`:
 * eager, grouped) or a file. ConfigError naming the file and JSON pointer for anything malformed, and
 * listing the shipped names for an unknown one.
 */
ImplementationProfile load_implementation(const std::string& name_or_file);

/** @brief Parses a profile document; `file` labels messages. */
ImplementationProfile implementation_from_json(const nlohmann::json& document, const std::string& file);

/** @brief The profile as its JSON document (load_implementation reads it back to an equal profile). */
nlohmann::json implementation_to_json(const ImplementationProfile& profile);

/** @brief Names `load_implementation` knows without a path: fused and the shipped files, sorted. */
std::vector<std::string> shipped_implementation_names();

std::string to_string(ImplPass pass);
std::string to_string(ImplStepKind kind);
std::string to_string(ImplRepeat repeat);
std::string to_string(ImplRows rows);
std::string to_string(ImplWidth width);
std::string to_string(ImplCondition when);

/** @brief Expected maximum of `n` independent standard normal draws (0 for n = 1), by numerical integration.
 */
double expected_max_of_normals(int n);

/** @brief What the slowest of `ranks` costs over one rank issuing at the mean speed: 1 + spread x E[max of
 * ranks standard normals]. */
double straggle_factor(double rank_spread, int ranks);

}  // namespace moesim::cost
