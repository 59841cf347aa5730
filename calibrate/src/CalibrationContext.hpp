#pragma once
/**
 * @file What the fits of `moesim calibrate` share (private to calibrate/src): the calibration in
 * progress, the input files' tags for the profile's source texts, and number formatting.
 */
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "moesim/calibrate/Calibrator.hpp"
#include "moesim/calibrate/Fitting.hpp"

namespace moesim::calibrate::detail {

// Significant digits the profile keeps: enough for the fit's accuracy, few enough that the same
// data gives the same file on any build (last-bit differences round away).
inline constexpr int kDigits = 4;

/** Input files by tag, in the order first seen: "[C1] file: what". */
class SourceTags {
 public:
  std::string tag(const std::string& file, const std::string& what);
  std::string tags_of(const std::set<std::string>& files) const;
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::vector<std::string> files_;
  std::vector<std::string> lines_;
};

struct Context {
  const hw::HwProfile& base;
  const CalibrationInputs& in;
  CalibrationResult& out;
  SourceTags tags;
  std::vector<std::string> calibrated_parts;
  /// benchmark (gemm, grouped_gemm, attention) -> how its rates were scaled to the maximum clock, for the
  /// sources
  std::map<std::string, std::string> clock_text;
};

std::string fixed(double value, int decimals);
std::string bytes_text(double bytes);
double round4(double value);
std::optional<hw::CollectiveKind> profile_kind(const std::string& op);
/** @brief The tags of the input files of one benchmark, e.g. "[C3][C4]". */
std::string files_tags(Context& c, const std::string& benchmark);
void add_residual(Context& c, const std::string& table, const ErrorSummary& e, const std::string& note);

/** @brief FLOPs of an m x k by k x n matrix product. */
inline double gemm_flops(double m, double n, double k) {
  return 2.0 * m * n * k;
}

// The fits, in the order calibrate() runs them; each changes c.out only where its inputs measured something.

/** @brief ConfigError when a kernels/ run measured another GPU than the base profile
 * (CalibrationProvenance.cpp). */
void check_same_gpu(Context& c);
/** @brief The calibrated profile's provenance: dates, device, driver and library versions, source tags. */
void set_provenance(Context& c);
/** @brief The power section from power_bench results (ClockFit.cpp). */
void fit_power_section(Context& c);
/** @brief Scales GEMM and attention cases NVML saw below the maximum clock to it (ClockFit.cpp). */
void scale_to_max_clock(Context& c, BenchResults& bench);
/** @brief The GEMM table, per-shape curves and dtype factors from gemm_bench (GemmFit.cpp). */
void fit_gemm(Context& c);
/** @brief grouped_gemm_factor from grouped_gemm_bench (GemmFit.cpp); after fit_gemm. */
void fit_grouped_gemm(Context& c);
/** @brief The attention curves and backward factor (AttentionFit.cpp). */
void fit_attention(Context& c);
/** @brief The memory-bound efficiency curve from memory_bench (MemoryFit.cpp). */
void fit_memory(Context& c);
/** @brief Collective tables from collectives_bench and nccl-tests logs (CollectiveTableFit.cpp). */
void fit_collectives(Context& c);
/** @brief The contention section from contention_bench results (ContentionFit.cpp). */
void fit_contention(Context& c);
/** @brief SMs a contention case's collective holds: its CTA cap, or comm_sms for NCCL's default. */
double held_sms(const ContentionCase& k, const hw::ContentionSpec& spec);
/** @brief A multi-GPU contention case beside an NCCL collective with both sides timed. */
bool beside_nccl(const ContentionCase& k);
/** @brief efficiency.router_topk from contention_bench's topk runs (RouterFit.cpp); after fit_contention. */
void fit_router_topk(Context& c);
/** @brief contention.memory_slowdown_with_comm from the rmsnorm runs (MemoryKernelFit.cpp); after
 * fit_contention. */
void fit_memory_kernels(Context& c);
/** @brief Launch costs from launch_bench (LaunchFit.cpp). */
void fit_launch(Context& c);
/** @brief gpu.atomic_add_bf16_per_s from torch_index_add_rates records (AtomicAddFit.cpp). */
void fit_atomic_add(Context& c);
void fit_attention_rows(Context& c);
/** @brief blas_call_overhead_us from launch_bench's eager_host_gemm or gemm_bench's host time
 * (LaunchFit.cpp). */
void fit_blas_call(Context& c);
/** @brief A kernel summary per PyTorch trace; the GEMM table scaled to traced GEMMs without gemm_bench
 * (TraceFit.cpp). */
void use_traces(Context& c);

/** @brief efficiency.tile_gemm from tile_gemm_bench's persistent cases (TileGemmFit.cpp). */
void fit_tile_gemm(Context& c);

}  // namespace moesim::calibrate::detail
