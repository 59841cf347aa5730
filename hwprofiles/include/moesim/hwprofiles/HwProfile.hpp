#pragma once
/**
 * @file The typed hardware profile and the lookups the engine and schedules use.
 *
 * Every field is in SI units (seconds, bytes, bytes/s, FLOP/s, Hz); the loader converts the
 * unit-suffixed JSON keys exactly once (see hwprofiles/FORMAT.md for the file layout). A profile
 * describes one node type and the scale-out network between such nodes:
 *
 *   node 0                                         node 1
 *   +--------------------------------------+       +-------------------+
 *   | GPU0  GPU1 ... GPU7                  |       | GPU0 ... GPU7     |
 *   |  |     |        |   intra fabric     |       |  |        |       |
 *   |  +-----+-- ... -+   (switch | mesh)  |       |  +-- ... -+       |
 *   |  NIC0  NIC1 ... NIC7 (nics_per_node) |=======| NIC0 ... NIC7     |  scale-out network
 *   +--------------------------------------+       +-------------------+
 *
 * Achieved rates are datasheet peaks times efficiencies:
 *   GEMM FLOP/s      = peak_flops(dtype) · sustained_clock_factor · gemm_efficiency(m,n,k)
 *                      · gemm_dtype_factor(dtype)
 *   attention FLOP/s = peak_flops(dtype) · sustained_clock_factor · attention_efficiency(seq, pass)
 *   memory bytes/s   = hbm_bw_Bps · memory_efficiency(bytes)
 *   collective time  = steps · step_latency_s + bus_bytes / busbw_Bps (nccl-tests conventions)
 */
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "moesim/hwprofiles/ProfileEnums.hpp"

namespace moesim::hw {

/** @brief Where the numbers came from; date/device/driver/libraries are required for calibrated profiles. */
struct Provenance {
  ProvenanceKind kind = ProvenanceKind::DATASHEET;
  std::vector<std::string> sources;  ///< one line per source, each starting with its tag, e.g. "[S2] ..."
  std::string date;                  ///< ISO date of the measurement or compilation; empty if not given
  std::string device;                ///< device the numbers were measured on; empty if not given
  std::string driver;                ///< driver / runtime version; empty if not given
  std::string libraries;             ///< NCCL/RCCL, cuBLAS/hipBLASLt... versions; empty if not given
};

/** @brief One GPU: compute peaks, memory, caches and launch costs. */
struct GpuSpec {
  std::string name;
  int sm_count = 0;                          ///< SMs (NVIDIA) or CUs (AMD)
  double peak_clock_hz = 0;                  ///< clock at which the datasheet peaks are quoted
  double max_boost_clock_hz = 0;             ///< highest clock the device reports
  double sustained_clock_factor = 1.0;       ///< sustained GEMM clock / peak clock, in (0, 1]
  std::map<std::string, double> peak_flops;  ///< dense (no 2:4 sparsity) FLOP/s by dtype key
  double hbm_bytes = 0;
  double hbm_bw_Bps = 0;  ///< datasheet HBM bandwidth
  double l2_bytes = 0;
  double llc_bytes = 0;          ///< last-level cache beyond L2 (AMD Infinity Cache); 0 if none
  double launch_overhead_s = 0;  ///< host time to launch one kernel eagerly
  /**
   * optional: host time of one BLAS GEMM call (cuBLASLt/hipBLASLt: argument checks, algorithm setup and the
   * launch), which exceeds an empty kernel's launch; 0 = use launch_overhead_s
   */
  double blas_call_overhead_s = 0;
  /**
   * optional: host time to issue one copy of a copy-engine collective (the copy stream's wait on the
   * fork event, cudaMemcpyPeerAsync, the event record, the comm stream's wait); 0 = launch_overhead_s
   */
  double copy_launch_overhead_s = 0;
  double graph_launch_overhead_s = 0;  ///< host time to launch one CUDA/HIP graph
  double graph_node_overhead_s = 0;    ///< device gap per kernel node inside a graph
  double kernel_min_s = 0;             ///< shortest device time any kernel takes
  /**
   * optional: bf16 elements per second that atomic adds into memory reach across the GPU (PyTorch's
   * index_add_ and scatter_add_: each source element one atomic add); 0 = not measured, such kernels timed by
   * their bytes
   */
  double atomic_add_bf16_per_s = 0;
  std::string source;
};

/** @brief A 1-D efficiency curve over a positive axis (sequence length or bytes). */
struct EfficiencyCurve {
  std::vector<double> x;      ///< strictly increasing, > 0
  std::vector<double> value;  ///< achieved fraction in (0, 1], one per x
  std::string source;
  /**
   * attention_fwd only, optional: the sequences x heads of one call the curve was measured at (0 = not
   * recorded). A call with other sequences x heads reads the curve at the length of equal work
   * (seq · sqrt(batch_heads of the call / this)): a fused kernel's efficiency follows its work, not its
   * length.
   */
  std::int64_t batch_heads = 0;
};

/** @brief GEMM efficiency over (m, min(n, k)); value[i][j] belongs to (m[i], min_nk[j]). */
struct GemmEfficiencyTable {
  std::vector<double> m;
  std::vector<double> min_nk;
  std::vector<std::vector<double>> value;
  std::string source;
};

/** @brief The measured efficiencies of one GEMM shape (n, k) at several m. */
struct GemmShapeCurve {
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::vector<double> m;      ///< strictly increasing, > 0
  std::vector<double> value;  ///< achieved fraction in (0, 1], one per m
};

/**
 * @brief Optional (calibrated profiles): the shapes a benchmark measured, looked up before the table.
 * Between two measured m the time is linear in m (a fixed cost plus a per-row cost, which is how one
 * kernel's time grows with its row count); below the smallest m, that m's efficiency times the table's
 * ratio between the two row counts (its time where the table has no smaller row either); beyond the
 * largest, that m's efficiency.
 */
struct GemmShapeCurves {
  std::vector<GemmShapeCurve> shapes;
  std::string source;
};

/**
 * @brief Optional (calibrated profiles): the router's softmax + top-k kernel, which is neither an HBM pass
 * nor a matrix multiply (one warp per token, a shuffle reduction and an atomic count per choice: 10-65 us
 * where its bytes take 1-5 us). Time alone = fixed_s + s_per_token · tokens, each column log-linear in top_k
 * between the measured points and clamped at the ends. Beside comm kernels it loses their SMs like any
 * compute kernel, times comm_slowdown; while it runs, SM-driven collectives slow by comm_drag.
 */
struct RouterTopkTable {
  std::vector<double> top_k;          ///< choices per token, strictly increasing; empty = no table
  std::vector<double> experts;        ///< the expert count each point was measured at (for the record)
  std::vector<double> fixed_s;        ///< time of a launch with no tokens
  std::vector<double> s_per_token;    ///< time per token
  std::vector<double> comm_slowdown;  ///< factor beyond the lost SMs while comm kernels run (>= 1)
  std::vector<double> comm_drag;      ///< factor on SM-driven collectives while it runs (>= 1)
  std::string source;
};

/** @brief The router table at one top_k; see RouterTopkTable. */
struct RouterTopkCost {
  double time_s = 0;
  double comm_slowdown = 1;
  double comm_drag = 1;
};

/**
 * @brief Optional (calibrated profiles): the rate of a persistent kernel's GEMM tile task (FlashMoE's: one
 * block computes a tile_m x tile_n output tile, tile_k deep per pipeline step, on mma.sync), measured over
 * the whole GPU with blocks_per_sm blocks on every SM. A megakernel prices its GEMM tiles at this rate
 * where the profile has it; it is far below the library GEMMs of the efficiency table (H100 tf32: 15% of
 * peak against cuBLAS's wgmma kernels near 70%).
 */
struct TileGemmSpec {
  std::int64_t tile_m = 0, tile_n = 0, tile_k = 0;  ///< the measured tile; 0 = no section
  int blocks_per_sm = 0;                            ///< resident blocks of the measured grid on each SM
  std::map<std::string, double> value;              ///< dtype -> fraction of that dtype's sustained peak
  std::string source;
};

/** @brief Achieved fractions of peak, each relative to the peak named in the file header comment. */
/** @brief What a row of queries costs a fused attention kernel beyond its work
 * (EfficiencySpec::attention_rows). */
struct AttentionRows {
  double overhead_keys = 0;
  std::string source;
};

struct EfficiencySpec {
  GemmEfficiencyTable gemm;
  GemmShapeCurves gemm_shapes;                      ///< empty when the profile has none
  std::map<std::string, double> gemm_dtype_factor;  ///< dtypes absent here use 1.0
  double grouped_gemm_factor = 1.0;
  EfficiencyCurve attention_fwd;  ///< x is the sequence length
  /**
   * optional: forward efficiency of UNFUSED attention (separate QKᵀ, softmax and PV kernels, the L×L scores
   * in HBM), as the in-tree layer runner runs it; empty when the profile has no such measurement
   */
  EfficiencyCurve attention_unfused_fwd;
  double attention_bwd_factor = 1.0;
  /**
   * optional: backward efficiency of FUSED attention over the sequence length (batch_heads as
   * attention_fwd's); empty: the forward curve times attention_bwd_factor. A fused backward's rate does not
   * follow its forward's: cuDNN's backward over forward time falls from 4.5-5.2 at L 512 to 3.0-3.4 at 8,192
   * (H200)
   */
  EfficiencyCurve attention_bwd;
  /**
   * optional: the fused attention kernel's cost of a row of queries beyond its score pairs, in keys: a pair
   * costs (1 + overhead_keys / keys in the row) of a pair in an endless row (partly masked edge tiles, the
   * row's start and end). The curves above fold it in for causal rows at batch_heads; a window's shorter
   * rows pay it on top. 0: not measured (windowed attention then runs at the curves' rate for its work).
   */
  AttentionRows attention_rows;
  EfficiencyCurve memory;       ///< x is the bytes a memory-bound kernel moves
  RouterTopkTable router_topk;  ///< empty when the profile has none
  TileGemmSpec tile_gemm;       ///< empty when the profile has none
  std::string source;           ///< for the scalar factors
};

/** @brief Intra-node fabric; all bandwidths are per direction. */
struct FabricSpec {
  FabricType type = FabricType::SWITCH;
  double link_bw_Bps = 0;         ///< datasheet rate of one link
  double usable_link_bw_Bps = 0;  ///< after protocol overhead (the rate NCCL/RCCL topology models use)
  int links_per_gpu = 0;
  double per_gpu_bw_Bps = 0;  ///< link_bw_Bps · links_per_gpu
  double latency_s = 0;       ///< one transfer's latency across the fabric
  std::string source;
};

/** @brief One node: how many GPUs and how they are wired. */
struct NodeSpec {
  int gpus_per_node = 0;
  FabricSpec fabric;
};

/** @brief Scale-out network between nodes; bandwidths per direction. */
struct NetworkSpec {
  int nics_per_node = 0;
  double nic_bw_Bps = 0;         ///< line rate of one NIC
  double nic_usable_bw_Bps = 0;  ///< what one NIC achieves in nccl-tests / RDMA benchmarks
  double latency_s = 0;          ///< one inter-node transfer, including NIC proxy overhead
  std::string source;
};

/** @brief Measured or derived performance of one collective on one group size. */
struct CollectiveTable {
  CollectiveKind kind = CollectiveKind::ALL_REDUCE;
  CollectiveScope scope = CollectiveScope::INTRA;
  int gpus = 0;  ///< group size; for scope inter the total over all nodes
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::RING;
  double step_latency_s = 0;
  std::vector<double> bytes;      ///< nccl-tests "size" of each point, strictly increasing
  std::vector<double> busbw_Bps;  ///< nccl-tests busbw at each size with the step latency taken out
  std::string source;
};

/** @brief How communication and computation slow each other down when they overlap. */
struct ContentionSpec {
  int comm_sms = 0;                         ///< SMs/CUs one communication kernel occupies
  double compute_slowdown_with_comm = 1.0;  ///< extra factor on compute beyond the lost SMs
  /**
   * optional: compute_slowdown_with_comm of a GEMM kernel by its length alone. contention_bench shows a
   * GEMM of a few waves (30-140 us) losing far more beside NCCL than one of tens of waves, beyond the SMs the
   * comm kernel takes: its tail wave spills. Log-linear in length between the points, clamped at the ends;
   * empty = compute_slowdown_with_comm for GEMMs too.
   */
  std::vector<double> gemm_kernel_s;        ///< GEMM lengths alone, strictly increasing
  std::vector<double> gemm_slowdown;        ///< the factor at each length
  double comm_slowdown_with_compute = 1.0;  ///< factor on communication time under compute
  /// optional: factor on compute while copy-engine transfers are in flight (1 = none measured)
  double compute_slowdown_with_copy = 1.0;
  /// optional: factor on the memory time of the layer's memory-bound kernels (norms, gathers, elementwise)
  /// while an SM-driven collective runs, beside HBM sharing (1 = none measured)
  double memory_slowdown_with_comm = 1.0;
  /// HBM bytes a GPU moves per bus byte of an SM-driven collective it takes part in (user buffers and
  /// the collective's staging buffers, both directions)
  double hbm_bytes_per_comm_byte = 0;
  double hbm_bytes_per_copy_byte = 2;  ///< the same for copy-engine transfers (a read and a write)
  double comm_hbm_weight = 1;          ///< a comm kernel's SM's claim on contended HBM, per compute-kernel SM
  std::string source;
};

/**
 * @brief Board power and how the SM clock falls when the draw reaches the power limit (optional section
 * "power"; absent = the GPU never runs below the clock its efficiency tables were measured at).
 *
 * Dynamic power of compute work at compute speed v (its rate / its rate at the maximum clock, v <= 1) is
 * compute_w_at_peak · (fraction of the dtype's dense peak it runs at) · v^speed_exponent; HBM and fabric
 * traffic draw a fixed energy per byte. The firmware lowers the clock until the mean board power over a
 * window of tens of milliseconds is at most limit_w (power_bench: duty cycles of one GEMM).
 */
struct PowerSpec {
  bool present = false;
  double limit_w = 0;            ///< enforced board power limit
  double idle_w = 0;             ///< board power with nothing running
  double compute_w_at_peak = 0;  ///< dynamic power of tensor work at 100% of the dense peak, maximum clock
  double hbm_j_per_byte = 0;     ///< dynamic energy per byte of HBM traffic (reads plus writes)
  double link_j_per_byte = 0;    ///< dynamic energy per byte a GPU sends or receives over the fabric
  double speed_exponent = 0;     ///< compute power ∝ v^speed_exponent (> 1)
  /// compute rate ∝ (SM clock)^clock_rate_exponent: how calibration turns a rate measured at a lower clock
  /// into the rate at the maximum clock
  double clock_rate_exponent = 0;
  std::string source;
};

/** @brief A complete hardware profile: one GPU type, its node and the network between nodes. */
struct HwProfile {
  int schema_version = 1;
  std::string name;
  std::string description;
  Provenance provenance;
  GpuSpec gpu;
  EfficiencySpec efficiency;
  NodeSpec node;
  NetworkSpec network;
  std::vector<CollectiveTable> collectives;
  ContentionSpec contention;
  PowerSpec power;
  std::string source_file;  ///< the file it was loaded from; names it in errors

  /** @brief Datasheet dense FLOP/s for a dtype; ConfigError for an unknown dtype or one without a peak. */
  double peak_flops(const std::string& dtype) const;
  /** @brief peak_flops(dtype) · sustained_clock_factor: the peak at the clock GEMMs really run at. */
  double sustained_peak_flops(const std::string& dtype) const;
  /**
   * @brief Achieved fraction of the sustained peak for an m×k by k×n GEMM: from the measured curve of
   * (n, k) when gemm_shapes holds one, else from the table (bilinear in log m, log min(n,k)).
   */
  double gemm_efficiency(std::int64_t m, std::int64_t n, std::int64_t k) const;
  /** @brief The 2-D table alone (bilinear in log m, log min(n, k)), without the measured shapes. */
  double gemm_table_efficiency(std::int64_t m, std::int64_t n, std::int64_t k) const;
  /** @brief The dtype's GEMM efficiency relative to the table's (bf16) one; 1.0 when not given. */
  double gemm_dtype_factor(const std::string& dtype) const;
  /**
   * @brief Efficiency of one grouped GEMM kernel (MoE experts) with `groups` groups of m_per_group rows:
   * grouped_gemm_factor · min(gemm_efficiency(m_per_group·groups, n, k), gemm_efficiency(m_per_group, N, N))
   * with N the largest min_nk in the table. The first term is how well all groups' tiles fill the GPU;
   * the second caps it by one group's arithmetic intensity (each group streams its own weights).
   */
  double grouped_gemm_efficiency(std::int64_t m_per_group, std::int64_t n, std::int64_t k,
                                 std::int64_t groups) const;
  /** @brief Achieved GEMM FLOP/s: sustained_peak_flops · gemm_efficiency · gemm_dtype_factor. */
  double achieved_gemm_flops(const std::string& dtype, std::int64_t m, std::int64_t n, std::int64_t k) const;
  /** @brief Fraction of the sustained peak an attention kernel reaches; backward = attention_bwd where the
   * profile has it (FUSED), else forward · attention_bwd_factor. UNFUSED reads attention_unfused_fwd
   * (ConfigError naming the profile when it has none). batch_heads: the call's sequences x heads, read
   * against attention_fwd.batch_heads where both are known (0 = unknown: the curve at seq). */
  double attention_efficiency(std::int64_t seq, AttentionPass pass, AttentionImpl impl = AttentionImpl::FUSED,
                              std::int64_t batch_heads = 0) const;
  /**
   * @brief What a windowed kernel's shorter rows leave of attention_efficiency(seq, ..., batch_heads): its
   * query rows hold `row_keys` keys on average, the causal rows the curve measured at that reading x/2
   * (x = seq · sqrt(batch_heads / attention_fwd.batch_heads)), so (1 + 2a/x) / (1 + a/row_keys) with a =
   * attention_rows.overhead_keys. 1 without a measured overhead.
   */
  double attention_row_factor(std::int64_t seq, std::int64_t batch_heads, double row_keys) const;
  /**
   * @brief The factor beyond the lost SMs on a GEMM kernel that lasts `kernel_s` alone while comm kernels
   * run: the contention section's gemm_slowdown_with_comm table, else compute_slowdown_with_comm.
   */
  double gemm_slowdown_with_comm(double kernel_s) const;
  /** @brief The router_topk table at `tokens` tokens and `top_k` choices; nullopt when the profile has none.
   */
  std::optional<RouterTopkCost> router_topk(std::int64_t tokens, std::int64_t top_k) const;
  /**
   * @brief FLOP/s of the whole GPU running persistent GEMM tile tasks in `dtype` (sustained peak ·
   * tile_gemm value); nullopt when the profile's tile_gemm section has no value for it.
   */
  std::optional<double> tile_gemm_flops(const std::string& dtype) const;
  /** @brief Fraction of hbm_bw_Bps a memory-bound kernel moving `bytes` reaches. */
  double memory_efficiency(double bytes) const;

  /** @brief Usable bandwidth one GPU pushes into the fabric when sending to `peers` peers at once. */
  double fabric_injection_bw_Bps(int peers) const;
  /** @brief Usable scale-out bandwidth per GPU: nics_per_node · nic_usable_bw_Bps / gpus_per_node. */
  double network_bw_per_gpu_Bps() const;

  /**
   * @brief True when the profile has at least one table for this kind and scope. `copy_engine` selects the
   * tables of copy-engine transfers (algorithm "copy_engine", cudaMemcpyPeerAsync) instead of the others.
   */
  bool has_collective(CollectiveKind kind, CollectiveScope scope, bool copy_engine = false) const;
  /**
   * @brief The table used for a group of `gpus`: the entry with the smallest gpus >= the request,
   * else the largest. ConfigError when the profile has no table of this kind, scope and transport.
   */
  const CollectiveTable& collective_table(CollectiveKind kind, int gpus, CollectiveScope scope,
                                          bool copy_engine = false) const;
  /** @brief Latency-free bus bandwidth at `bytes`: log-linear in bytes, clamped at the table ends. */
  double busbw_Bps(CollectiveKind kind, int gpus, CollectiveScope scope, double bytes,
                   bool copy_engine = false) const;
  /** @brief Per-step latency of the table collective_table() picks. */
  double step_latency_s(CollectiveKind kind, int gpus, CollectiveScope scope, bool copy_engine = false) const;
  /** @brief steps · step_latency_s + bus_bytes(kind, gpus, bytes) / busbw_Bps, with `bytes` the nccl-tests
   * size. */
  double collective_time_s(CollectiveKind kind, int gpus, CollectiveScope scope, double bytes,
                           bool copy_engine = false) const;
};

/** @brief Latency steps of the engine's collective model: 2(n-1) all-reduce, n-1 all-gather/reduce-scatter, 1
 * all-to-all. */
int collective_steps(CollectiveKind kind, int gpus);

/**
 * @brief Bytes on the bus per rank, nccl-tests style: size · 2(n-1)/n for all-reduce, size · (n-1)/n
 * otherwise. `bytes` is the nccl-tests size: the all-reduce buffer, the all-gather output, the
 * reduce-scatter input, the all-to-all send buffer of one rank.
 */
double bus_bytes(CollectiveKind kind, int gpus, double bytes);

/**
 * @brief Fraction of the SMs a GEMM's output tiles fill at once: ceil(m/128)·ceil(n/128)·groups tiles over
 * sm_count, in [1/sm_count, 1] (128x128 is the tile of the kernels the efficiency tables were measured with).
 */
double gemm_sm_fraction(std::int64_t m, std::int64_t n, std::int64_t groups, int sm_count);

/**
 * @brief The causal attention length with the work (batch_heads · seq²) of `seq` at `batch_heads`, at
 * `reference` sequences x heads: seq · sqrt(batch_heads / reference); `seq` when either count is unknown (<=
 * 0).
 */
double equal_work_seq(double seq, std::int64_t batch_heads, std::int64_t reference);

/** @brief The dtype keys a profile may give peaks for: fp32, tf32, bf16, fp16, fp8. */
const std::vector<std::string>& known_dtypes();

/**
 * @brief Checks every rule of FORMAT.md and throws ConfigError naming source_file, the JSON pointer,
 * the value in the file's units and the rule, e.g. "h100.json: /node/fabric/link_bw_GBps = 0: must be > 0".
 */
void validate(const HwProfile& profile);

}  // namespace moesim::hw
