// tile_gemm_bench: the GEMM tile task of FlashMoE's processor blocks, at the rate FlashMoE runs it.
//
// The kernel (common/TileGemm.cu) is FlashMoE's block GEMM rebuilt without CUTLASS: a 128×64 output
// tile over K in slabs of 8, a 4-stage cp.async pipeline, 128 threads, mma.sync 16×8×8 tf32 or bf16
// with fp32 accumulation (moesim/kernels/TileGemmPlan.hpp cites the source). Two ways to run it:
//   persistent  one expert GEMM Y[M,N] = A[M,K]·W[N,K]ᵀ (M = tokens routed to the expert, padded to 128;
//               N = K = 2048 by default: the FlashMoE evaluation layer's H and I) on FlashMoE's grid,
//               2 blocks per SM less one scheduler block, each block looping over the tiles
//   per_sm      1 and 2 blocks per SM, every block running the same number of tile tasks: the time
//               one processor block takes per tile while all of them compute
// Rows: TFLOP/s, % of the datasheet dense tf32/bf16 peak, ns per tile task (processor time per tile:
// time · blocks / tasks) and waves (tasks per block); sampled outputs against an fp64 reference.
#include <algorithm>

#include "BenchRunner.hpp"
#include "DeviceInfo.hpp"
#include "LtMatmul.hpp"
#include "OperandSets.hpp"
#include "TileGemm.hpp"
#include "moesim/kernels/DatasheetPeaks.hpp"
#include "moesim/kernels/TileGemmPlan.hpp"

namespace moesim::kernels {
namespace {

struct TileCase {
  std::string mode;  ///< "persistent" or "per_sm"
  TileMath math = TileMath::TF32;
  TileGemmPlan plan;
  int blocks_per_sm = 0;
  std::int64_t blocks = 0;
  std::int64_t tasks = 0;
};

DataType storage_type(TileMath math) {
  return math == TileMath::TF32 ? DataType::FP32 : DataType::BF16;
}

class TileGemmBench : public CaseBench {
 public:
  struct Options {
    std::vector<std::string> maths{"tf32", "bf16"};
    std::vector<std::string> modes{"persistent", "per_sm"};
    std::vector<std::int64_t> tokens{128, 256, 512, 1024, 2048, 4096, 16384};
    std::int64_t n = 2048;
    std::int64_t k = 2048;
    std::int64_t tasks_per_block = 8;
    std::int64_t samples = 256;
    double peak_tf32_tflops = 0;
    double peak_bf16_tflops = 0;
  };

  TileGemmBench(const Options& options, const CommonOptions& common, int device)
      : options_(options), common_(common), device_(device) {
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    const GpuDescription gpu = describe_gpu(device);
    sms_ = gpu.multiprocessors;
    l2_bytes_ = gpu.l2_bytes;
  }
  ~TileGemmBench() override { (void)cudaStreamDestroy(stream_); }

  /** @brief Builds the sweep; returns the warnings (a GPU that cannot hold FlashMoE's 2 blocks per SM). */
  std::vector<std::string> build_cases() {
    std::vector<std::string> warnings;
    const TileConfig config;
    for (const std::string& name : options_.maths) {
      const TileMath math = parse_math(name);
      const int resident = tile_gemm_blocks_per_sm(math);
      if (resident < config.blocks_per_sm)
        warnings.push_back(name + ": " + std::to_string(resident) + " block(s) per SM fit, FlashMoE runs " +
                           std::to_string(config.blocks_per_sm));
      if (has_mode("persistent")) {
        const std::int64_t blocks = std::min(resident, config.blocks_per_sm) * sms_ - config.os_blocks;
        for (std::int64_t tokens : options_.tokens) {
          const TileGemmPlan plan = make_plan(tokens, config);
          cases_.push_back({"persistent", math, plan, config.blocks_per_sm, blocks, plan.tiles()});
        }
      }
      if (has_mode("per_sm")) {
        for (int per_sm = 1; per_sm <= std::min(resident, config.blocks_per_sm); ++per_sm) {
          // Enough 128-row tiles that every block gets tasks_per_block of them, and every tile is computed.
          const std::int64_t blocks = static_cast<std::int64_t>(per_sm) * sms_;
          const std::int64_t tiles_n = options_.n / config.bn;
          const std::int64_t tiles_m = task_waves(blocks * options_.tasks_per_block, tiles_n);
          const TileGemmPlan plan = make_plan(tiles_m * config.bm, config);
          cases_.push_back({"per_sm", math, plan, per_sm, blocks, blocks * task_waves(plan.tiles(), blocks)});
        }
      }
    }
    return warnings;
  }

  void set_peaks(double tf32, double bf16) {
    peak_tf32_ = tf32;
    peak_bf16_ = bf16;
  }

  std::vector<TextColumn> case_columns() const override {
    return {{"mode", "", 10}, {"math", "", 4},   {"M", "", 6},    {"N", "", 5},
            {"K", "", 5},     {"blocks", "", 6}, {"tasks", "", 6}};
  }
  std::vector<TextColumn> metric_columns() const override {
    return {{"rate", "TFLOP/s", 8}, {"peak", "%", 5}, {"tile", "ns", 8}, {"waves", "", 5}};
  }
  std::size_t case_count() const override { return cases_.size(); }

  CaseDescription describe(std::size_t index) const override {
    const TileCase& c = cases_[index];
    const TileConfig& t = c.plan.config;
    CaseDescription d;
    d.cells = {c.mode,
               tile_math_name(c.math),
               std::to_string(c.plan.m),
               std::to_string(c.plan.n),
               std::to_string(c.plan.k),
               std::to_string(c.blocks),
               std::to_string(c.tasks)};
    d.params["mode"] = c.mode;
    d.params["math"] = tile_math_name(c.math);
    d.params["m"] = c.plan.m;
    d.params["n"] = c.plan.n;
    d.params["k"] = c.plan.k;
    d.params["tile"] = Json::array({t.bm, t.bn, t.bk});
    d.params["stages"] = t.stages;
    d.params["threads"] = t.threads;
    d.params["mma"] = c.math == TileMath::TF32 ? "mma.sync.m16n8k8.f32.tf32.tf32.f32"
                                               : "mma.sync.m16n8k8.f32.bf16.bf16.f32";
    d.params["blocks_per_sm"] = c.blocks_per_sm;
    d.params["blocks"] = c.blocks;
    d.params["tiles"] = c.plan.tiles();
    d.params["tasks"] = c.tasks;
    d.params["layout"] = "row-major Y[M,N] = A[M,K] * W[N,K]^T";
    return d;
  }

  void init(std::size_t index) override {
    const TileCase& c = cases_[index];
    const DataType type = storage_type(c.math);
    const std::size_t a_elements = static_cast<std::size_t>(c.plan.m * c.plan.k);
    const std::size_t w_elements = static_cast<std::size_t>(c.plan.n * c.plan.k);
    sets_ = rotation_count((a_elements + w_elements) * element_size(type), l2_bytes_);
    const auto seed = static_cast<std::uint64_t>(common_.seed) + index * 1000;
    a_ = random_buffers(device_, sets_, a_elements, type, seed, 1.0f, stream_);
    w_ = random_buffers(device_, sets_, w_elements, type, seed + 500, 1.0f, stream_);
    if (c.math == TileMath::TF32) {
      for (std::size_t s = 0; s < sets_; ++s) {
        round_to_tf32(static_cast<float*>(a_[s].get()), a_elements, stream_);
        round_to_tf32(static_cast<float*>(w_[s].get()), w_elements, stream_);
      }
    }
    const std::size_t y_elements = static_cast<std::size_t>(c.plan.m * c.plan.n);
    y_ = DeviceBuffer(device_, y_elements * element_size(type));
    fill_constant(y_.get(), type, y_elements, NAN, stream_);
    iteration_ = 0;
  }

  void run(std::size_t index) override {
    const TileCase& c = cases_[index];
    const std::size_t set = iteration_++ % sets_;
    const TileGemmArgs args{a_[set].get(), w_[set].get(), y_.get(), c.plan.m, c.plan.n, c.plan.k, c.tasks};
    launch_tile_gemm(c.math, args, static_cast<int>(c.blocks), stream_);
  }

  std::vector<DeviceStream> streams() const override { return {{device_, stream_}}; }
  bool is_graph_capturable() const override { return true; }

  WorkCount bytes_and_flops(std::size_t index) const override {
    const TileCase& c = cases_[index];
    const double element = static_cast<double>(element_size(storage_type(c.math)));
    const double bytes =
        element * static_cast<double>(c.plan.m * c.plan.k + c.plan.n * c.plan.k + c.plan.m * c.plan.n);
    return {bytes, static_cast<double>(c.tasks) * c.plan.flops_per_tile()};
  }

  std::vector<double> metrics(std::size_t index, const WorkCount& work, double seconds) const override {
    const TileCase& c = cases_[index];
    const double rate = teraflops_per_second(work.flops, seconds);
    const double peak = c.math == TileMath::TF32 ? peak_tf32_ : peak_bf16_;
    return {rate, peak > 0 ? rate / peak * 100.0 : 0.0, ns_per_task(seconds, c.blocks, c.tasks),
            static_cast<double>(task_waves(c.tasks, c.blocks))};
  }

  ErrorTally verify(std::size_t index) override {
    const TileCase& c = cases_[index];
    MatmulShape shape;
    shape.m = c.plan.m;
    shape.n = c.plan.n;
    shape.k = c.plan.k;
    shape.in_type = shape.out_type = storage_type(c.math);
    const std::size_t last = (iteration_ + sets_ - 1) % sets_;
    // The operands are exact tf32 (or bf16) values, so tf32 leaves only fp32 accumulation, far under
    // the ~3e-4 a tf32 product of fp32 data shows (METHOD); bf16 outputs round at 2^-9 relative.
    const double tolerance = c.math == TileMath::TF32 ? 3e-4 : 1e-2;
    return verify_matmul_samples(shape, a_[last].get(), w_[last].get(), y_.get(),
                                 static_cast<int>(options_.samples),
                                 static_cast<std::uint64_t>(common_.seed) + index, tolerance, stream_);
  }

  void release(std::size_t) override {
    a_.clear();
    w_.clear();
    y_.reset();
  }

 private:
  static TileMath parse_math(const std::string& name) {
    if (name == "tf32") return TileMath::TF32;
    if (name == "bf16") return TileMath::BF16;
    throw ArgError("--maths: unknown math '" + name + "' (tf32, bf16)");
  }

  TileGemmPlan make_plan(std::int64_t tokens, const TileConfig& config) const {
    try {
      return TileGemmPlan::for_tokens(tokens, options_.n, options_.k, config);
    } catch (const std::invalid_argument& error) {
      throw ArgError(error.what());
    }
  }

  bool has_mode(const std::string& mode) const {
    return std::find(options_.modes.begin(), options_.modes.end(), mode) != options_.modes.end();
  }

  Options options_;
  const CommonOptions& common_;
  int device_;
  int sms_ = 0;
  std::size_t l2_bytes_ = 0;
  cudaStream_t stream_ = nullptr;
  std::vector<TileCase> cases_;
  std::vector<DeviceBuffer> a_, w_;
  DeviceBuffer y_;
  std::size_t sets_ = 1;
  std::size_t iteration_ = 0;
  double peak_tf32_ = 0, peak_bf16_ = 0;
};

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session(
      "tile_gemm", "FlashMoE's GEMM tile task (128x64x8, 4 stages, 128 threads, mma.sync): rate per tile");
  TileGemmBench::Options options;
  CliOptions& parser = session.parser();
  parser.add_string_list("maths", 0, &options.maths, "operand types: tf32 (fp32 data), bf16");
  parser.add_string_list("modes", 0, &options.modes,
                         "persistent (FlashMoE's grid over one expert GEMM), per_sm (1 and 2 blocks per SM)");
  parser.add_int_list("tokens", 0, &options.tokens,
                      "persistent mode: tokens routed to the expert (M, padded to 128)");
  parser.add_int("n", 0, &options.n, "N: output columns (multiple of 64; FlashMoE eval I = 2048)", 64);
  parser.add_int("k", 0, &options.k, "K: inner dimension (multiple of 8; FlashMoE eval H = 2048)", 8);
  parser.add_int("tasks_per_block", 0, &options.tasks_per_block, "per_sm mode: tile tasks of every block", 1);
  parser.add_int("samples", 0, &options.samples, "outputs recomputed in fp64 per case", 1);
  parser.add_double("peak_tf32_tflops", 0, &options.peak_tf32_tflops, "tf32 peak (0: datasheet by GPU name)");
  parser.add_double("peak_bf16_tflops", 0, &options.peak_bf16_tflops, "bf16 peak (0: datasheet by GPU name)");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    s.open({});
    const int device = s.devices().front();
    const std::string name = describe_gpu(device).name;
    double tf32 = options.peak_tf32_tflops, bf16 = options.peak_bf16_tflops;
    if (const auto peak = datasheet_peak(name)) {
      if (tf32 == 0) tf32 = peak->tf32_dense_tflops();
      if (bf16 == 0) bf16 = peak->bf16_dense_tflops;
      s.log().comment("Peak: " + peak->part + " datasheet dense tf32 " + format_fixed(tf32, 1) + ", bf16 " +
                      format_fixed(bf16, 1) + " TFLOP/s");
    } else if (tf32 == 0 || bf16 == 0) {
      s.log().warning("unknown GPU '" + name + "': no datasheet peak, efficiency column is 0");
    }
    s.log().add_context("peak_tf32_tflops", tf32);
    s.log().add_context("peak_bf16_tflops", bf16);
    TileGemmBench bench(options, s.options(), device);
    bench.set_peaks(tf32, bf16);
    for (const std::string& warning : bench.build_cases()) s.log().warning(warning);
    run_cases(s, bench);
  });
}
