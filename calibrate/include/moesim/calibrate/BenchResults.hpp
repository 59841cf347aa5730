#pragma once
/**
 * @file Typed records of the kernels/ benchmark results (kernels/README.md, JSON schema_version 1)
 * that calibration uses. A results file is one benchmark's document (`gemm_bench -J`), a torch
 * comparison document (`tools/torch_sdpa_compare.py`), or a `moesim bench` file that holds several
 * of them under "suites". Times are in seconds, sizes in bytes, rates in SI units.
 */
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace moesim::calibrate {

/** @brief Where and with what one result document was measured. */
struct RunInfo {
  std::string file;        ///< the file the document came from (as given on the command line)
  std::string benchmark;   ///< "gemm", "collectives", ..., "torch_sdpa"
  std::string start_time;  ///< ISO time the run started
  std::string driver;      ///< driver version, e.g. "580.159.04"
  std::string driver_api;  ///< CUDA/HIP driver API version
  std::string runtime;     ///< CUDA/HIP runtime version
  std::string gpu_api;     ///< "CUDA" or "HIP"
  std::map<std::string, std::string> libraries;  ///< e.g. cuBLASLt -> 13.1.0, NCCL -> 2.28.9, PyTorch -> ...
  std::string gpu_name;                          ///< name of the first GPU
  std::string gpu_arch;                          ///< e.g. sm_90
  int gpu_count = 0;                             ///< GPUs the benchmark used
  int sm_count = 0;                              ///< SMs/CUs of the first GPU
  std::map<std::string, std::string> environment;
};

/**
 * @brief What NVML read while one benchmark case ran: the record's "nvml" object (kernels/ CaseBench
 * benchmarks since 0bb5f2e; older files and runs without NVML have none).
 */
struct NvmlReading {
  double sm_clock_hz = 0;      ///< mean SM clock over the samples
  double sm_clock_min_hz = 0;  ///< lowest SM clock sampled
  double power_w = 0;          ///< mean board power
  int samples = 0;
  std::string clock_reasons;  ///< e.g. "sw_power_cap", "none"
};

/** @brief One GEMM case of gemm_bench: Y[m,n] = X[m,k] · W[n,k]ᵀ. */
struct GemmCase {
  std::string name;
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype;  ///< input dtype in profile spelling: bf16, fp8, fp16, fp32
  double time_s = 0;  ///< p50
  double host_s = 0;  ///< host enqueue cost of one call (gemm_bench's host_us); 0 when not measured
  std::optional<NvmlReading> nvml = std::nullopt;
};

/** @brief One grouped_gemm_bench case: `experts` GEMMs of tokens_per_expert × n × k. */
struct GroupedGemmCase {
  std::string impl;  ///< "batched" (one kernel) or "loop" (one kernel per expert)
  std::int64_t experts = 0, tokens_per_expert = 0, n = 0, k = 0;
  std::string dtype;
  double time_s = 0;
  std::optional<NvmlReading> nvml = std::nullopt;
};

/**
 * @brief One tile_gemm_bench case: a persistent kernel's GEMM tile task (FlashMoE's 128x64 tile on mma.sync)
 * computing an m x n x k GEMM, one tile per task.
 */
struct TileGemmCase {
  std::string mode;   ///< "persistent" (FlashMoE's grid, blocks loop over tiles) or "per_sm"
  std::string dtype;  ///< the MMA's input type in profile spelling: tf32, bf16, fp16
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t tile_m = 0, tile_n = 0, tile_k = 0;
  int blocks_per_sm = 0;
  std::int64_t blocks = 0, tiles = 0;
  double time_s = 0;  ///< p50
};

/** @brief One causal attention case (attention_bench or torch SDPA). */
struct AttentionCase {
  std::string impl;  ///< "unfused" (attention_bench) or "torch:<backend>" (flash, cudnn, efficient)
  bool forward = true;
  std::int64_t batch_heads = 0, seq_len = 0, d_qk = 0, d_v = 0;
  double time_s = 0;
  std::optional<NvmlReading> nvml = std::nullopt;  ///< attention_bench only (torch SDPA results carry none)
};

/** @brief One memory_bench case. */
struct MemoryCase {
  std::string op;
  double bytes = 0;
  double time_s = 0;
};

/** @brief One collective size (collectives_bench, or an nccl-tests / rccl-tests row). */
struct CollectiveCase {
  std::string op;  ///< all_reduce, all_gather, reduce_scatter, all_to_all (others are kept but not fitted)
  int ranks = 0;
  int hosts = 1;      ///< distinct hosts of the group (1: intra-node)
  double bytes = 0;   ///< nccl-tests size
  double time_s = 0;  ///< p50 (nccl-tests: the out-of-place time)
  std::string file;
};

/** @brief One contention_bench scenario: a GEMM stream and a communication stream, alone and together. */
struct ContentionCase {
  /// the compute kernel: gemm, add (streaming, HBM-bound), softmax, rmsnorm or topk
  std::string compute = "gemm";
  std::string comm;         ///< all_reduce, all_to_all, ce_copy
  double bytes = 0;         ///< communication size per rank
  std::optional<int> ctas;  ///< NCCL maxCTAs (0 = NCCL's default); none for copy-engine transfers
  int ranks = 0;
  bool high_priority = false;                       ///< comm stream at the highest priority
  std::int64_t gemm_m = 0, gemm_n = 0, gemm_k = 0;  ///< gemm only
  double compute_hbm_Bps = 0;                       ///< add, softmax: the kernel's HBM bytes/s alone
  std::int64_t tokens = 0, experts = 0, top_k = 0;  ///< topk only: the router's selection (run options)
  double compute_alone_s = 0;
  std::optional<double> compute_with_comm_s;
  double comm_alone_s = 0;
  std::optional<double> comm_with_compute_s;
  std::string file;
};

/** @brief One launch_bench measure (launch_host, launch_device, graph_device_N, graph_host_N, ...). */
struct LaunchCase {
  std::string measure;
  double time_s = 0;  ///< p50 per operation
};

/** @brief One power_bench load on one GPU (kernels/power_bench.cu): a sustained load and what NVML read. */
struct PowerLoad {
  std::string load;                  ///< as given to --loads, e.g. "gemm:8192:8192:8192:0.75"
  std::string kind;                  ///< idle, gemm, copy, peer
  int gpu = 0;                       ///< GPU index
  std::int64_t m = 0, n = 0, k = 0;  ///< gemm only
  std::string dtype;                 ///< gemm only, profile spelling
  double target_duty = 0;            ///< duty asked for
  double duty = 0;                   ///< measured busy share of the window
  double busy_rate = 0;       ///< while busy: FLOP/s (gemm) or bytes/s copied (copy, peer: sent per GPU)
  double first_rate = 0;      ///< the same for the first burst after the rest (near the maximum clock)
  double sm_clock_hz = 0;     ///< mean SM clock over the measured window
  double power_w = 0;         ///< mean board power over the measured window
  std::string clock_reasons;  ///< clock event reasons seen ("none", "sw_power_cap", ...)
};

/** @brief One power_bench document. */
struct PowerRun {
  std::string file;
  double limit_w = 0;       ///< the largest enforced power limit of its GPUs (power_limit_w); 0 = not read
  double max_clock_hz = 0;  ///< the first GPU's maximum SM clock (gpus[0].sm_clock_max_mhz)
  std::vector<PowerLoad> loads;
};

/**
 * @brief One case of kernels/tools/torch_index_add_rates.py: `out[tokens, hidden].index_add_(0, index[rows],
 * src[rows, hidden])`, rows x hidden atomic adds.
 */
struct AtomicAddCase {
  std::int64_t rows = 0, hidden = 0;
  std::string dtype;        ///< PyTorch's name: bfloat16, float32
  double time_s = 0;        ///< index_add_, per call
  double dense_time_s = 0;  ///< a dense torch.add of rows x hidden elements, per call
};

/**
 * @brief One call of kernels/tools/torch_window_attention.py: causal attention of `batch` sequences of `seq`,
 * in full or through a window (sliding: the last `window` keys; chunked: chunks of `window`).
 */
struct WindowAttentionCase {
  std::string backend;      ///< flex (a compiled block mask), flash_attn, sdpa (full only)
  std::string window_kind;  ///< full, sliding, chunked
  std::int64_t heads = 0, head_dim = 0, seq = 0, batch = 0, window = 0;
  double forward_s = 0;  ///< per call
};

/** @brief Everything read from the --from files. */
struct BenchResults {
  std::vector<RunInfo> runs;
  std::vector<GemmCase> gemm;
  std::vector<GroupedGemmCase> grouped_gemm;
  std::vector<TileGemmCase> tile_gemm;
  std::vector<AttentionCase> attention;
  std::vector<MemoryCase> memory;
  std::vector<CollectiveCase> collectives;
  std::vector<ContentionCase> contention;
  std::vector<LaunchCase> launch;
  std::vector<PowerRun> power;
  std::vector<AtomicAddCase> atomic_adds;
  std::vector<WindowAttentionCase> window_attention;
  /// "file: benchmark" of documents calibration has no use for, and "file: power_bench load LOAD" of power
  /// loads it skips (smcopy, gemm+smcopy)
  std::vector<std::string> ignored;
};

/**
 * @brief Reads results files in order and appends their cases. A file that is not JSON, not a
 * kernels/ results document (schema_version 1), or lacks a field a case needs is a ConfigError
 * naming the file and the line (syntax) or JSON pointer (content).
 */
BenchResults load_bench_results(const std::vector<std::string>& paths);

/** @brief Appends the cases of one parsed document (`file` names it in errors). */
void add_bench_document(const std::string& text, const std::string& file, BenchResults& out);

}  // namespace moesim::calibrate
