// gemm_bench: cuBLASLt (hipBLASLt) bf16 and fp8 GEMMs over MoE shapes, achieved TFLOP/s and
// efficiency against the datasheet dense peak.
//
// Shapes (row-major Y[M,N] = X[M,K]·W[N,K]ᵀ, a linear layer):
//   attn   tokens × hidden -> QKV (N = 3·hidden) and output projection (N = K = hidden),
//          hidden 2048/4096/5120/7168, tokens --attn_tokens
//   expert M = --expert_tokens rows through one expert: up+gate (N = 2·ffn, K = hidden) and down
//          (N = hidden, K = ffn) for (ffn, hidden) = (768, 2048) Qwen3-30B-A3B, (1408, 2048)
//          DeepSeek-V2-Lite, (1536, 4096) Qwen3-235B-A22B, (1536, 5120) DeepSeek-V2, (2048, 2048)
//          the FlashMoE layer, (2048, 7168) DeepSeek-V3, (8192, 5120) Llama-4-Scout, (14336, 4096)
//          Mixtral-8x7B
//   mla    DeepSeek-V3 MLA projections at --attn_tokens: q_a 7168->1536, q_b 1536->128·192,
//          kv_a 7168->576, kv_b 512->128·256, o 128·128->7168
//   square 8192³, the usual peak reference
//   models every plain GEMM the simulator emits for a layer of each shipped model
//   (tools/model_gemm_shapes.json,
//          kept equal to the simulator by tests/kernels/ModelGemmShapes_test): attention and MLA projections,
//          router, shared experts and dense FFN at --attn_tokens rows, routed experts at --expert_tokens;
//          a shape shared by several models is timed once and lists them all ("uses")
//
// Each bf16 product is also timed through cublasGemmEx (what torch.matmul's cuBLAS back end calls) beside
// cuBLASLt's pick on the first input set; the faster one is timed and reported ("blas", "candidates_us",
// column ex_vs_lt = cublasGemmEx time / cuBLASLt time; CUDA only, --no_gemm_ex to skip).
#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>

#include "BenchRunner.hpp"
#include "CublasGemm.hpp"
#include "DeviceInfo.hpp"
#include "LtMatmul.hpp"
#include "OperandSets.hpp"
#include "moesim/kernels/DatasheetPeaks.hpp"
#include "moesim/kernels/ModelGemms.hpp"

namespace moesim::kernels {
namespace {

struct GemmCase {
  std::string group;
  std::string name;
  MatmulShape shape;
  std::vector<std::string> uses;  ///< models group: "model/op.kernel" of every model with this product
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) items.push_back(item);
  return items;
}

bool has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

class GemmBench : public CaseBench {
 public:
  struct Options {
    std::string groups = "attn,expert,mla,square";
    std::string dtypes = "bf16,fp8";
    std::vector<std::int64_t> attn_tokens{4096, 16384};
    std::vector<std::int64_t> expert_tokens{16, 64, 256, 1024, 4096, 16384};
    double peak_bf16_tflops = 0;
    double peak_fp8_tflops = 0;
    std::int64_t samples = 256;
    std::int64_t algos = LtMatmul::kCandidates;
    bool gemm_ex = true;
    std::string shapes = MOESIM_MODEL_GEMM_SHAPES;
  };

  GemmBench(const Options& options, const CommonOptions& common, int device)
      : options_(options), common_(common), device_(device) {
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    l2_bytes_ = describe_gpu(device).l2_bytes;
    workspace_ = DeviceBuffer(device, LtMatmul::kWorkspaceBytes);
    build_cases();
  }
  ~GemmBench() override { (void)cudaStreamDestroy(stream_); }

  std::vector<TextColumn> case_columns() const override {
    return {{"group", "", 6}, {"name", "", 16}, {"M", "", 6}, {"N", "", 6}, {"K", "", 6}, {"dtype", "", 7}};
  }
  std::vector<TextColumn> metric_columns() const override {
    return {
        {"rate", "TFLOP/s", 9}, {"peak", "%", 6}, {"sets", "", 4}, {"host", "us", 6}, {"ex_vs_lt", "", 8}};
  }
  std::size_t case_count() const override { return cases_.size(); }

  CaseDescription describe(std::size_t index) const override {
    const GemmCase& c = cases_[index];
    CaseDescription description;
    description.cells = {c.group,
                         c.name,
                         std::to_string(c.shape.m),
                         std::to_string(c.shape.n),
                         std::to_string(c.shape.k),
                         data_type_name(c.shape.in_type)};
    description.params["group"] = c.group;
    description.params["name"] = c.name;
    description.params["m"] = static_cast<long long>(c.shape.m);
    description.params["n"] = static_cast<long long>(c.shape.n);
    description.params["k"] = static_cast<long long>(c.shape.k);
    description.params["in_dtype"] = data_type_name(c.shape.in_type);
    description.params["out_dtype"] = data_type_name(c.shape.out_type);
    description.params["layout"] = "row-major Y[M,N] = X[M,K] * W[N,K]^T (cuBLASLt TN)";
    if (!c.uses.empty()) description.params["uses"] = c.uses;
    return description;
  }

  void init(std::size_t index) override {
    const MatmulShape& shape = cases_[index].shape;
    matmul_ = std::make_unique<LtMatmul>(handle_, shape);
    const std::size_t set_bytes = static_cast<std::size_t>(shape.min_bytes());
    sets_ = rotation_count(set_bytes, l2_bytes_);
    const auto seed = static_cast<std::uint64_t>(common_.seed) + index * 1000;
    x_ = random_buffers(device_, sets_, static_cast<std::size_t>(shape.a_elements()), shape.in_type, seed,
                        1.0f, stream_);
    w_ = random_buffers(device_, sets_, static_cast<std::size_t>(shape.b_elements()), shape.in_type,
                        seed + 500, 1.0f, stream_);
    y_ = DeviceBuffer(device_, static_cast<std::size_t>(shape.y_elements()) * element_size(shape.out_type));
    matmul_->autotune(x_[0].get(), w_[0].get(), y_.get(), workspace_.get(), stream_,
                      static_cast<int>(options_.algos));
    compare_with_gemm_ex(shape);
    host_us_ = host_microseconds_per_call();
    fill_constant(y_.get(), shape.out_type, static_cast<std::size_t>(shape.y_elements()), NAN, stream_);
    iteration_ = 0;
  }

  /**
   * Host time to enqueue one product (cublasLtMatmul's own overhead plus the kernel launch): a model that
   * runs many small GEMMs (one per expert) is bound by it, and it exceeds an empty kernel's launch cost.
   * Median of 5 batches of 20 back-to-back enqueues; 20 products stay far below the launch queue's depth,
   * so the host never waits for the GPU.
   */
  double host_microseconds_per_call() {
    constexpr int kCalls = 20, kBatches = 5;
    std::vector<double> batches;
    for (int b = 0; b < kBatches; ++b) {
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kCalls; ++i) enqueue(0);
      const auto end = std::chrono::steady_clock::now();
      batches.push_back(std::chrono::duration<double, std::micro>(end - start).count() / kCalls);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::sort(batches.begin(), batches.end());
    return batches[batches.size() / 2];
  }

  void run(std::size_t) override { enqueue(iteration_++ % sets_); }

  void annotate(std::size_t, Json& record) const override {
    record["blas"] = use_gemm_ex_ ? "cublasGemmEx" : "cublasLt";
    record["cublaslt_algo"] = matmul_->algo_text();
    const auto timed = [](double us) { return us > 0 ? Json(us) : Json(); };  // null: not a candidate
    record["candidates_us"] = {{"cublaslt", timed(lt_us_)}, {"cublas_gemm_ex", timed(ex_us_)}};
  }

  std::vector<DeviceStream> streams() const override { return {{device_, stream_}}; }
  bool is_graph_capturable() const override { return true; }

  WorkCount bytes_and_flops(std::size_t index) const override {
    return {cases_[index].shape.min_bytes(), cases_[index].shape.flops()};
  }

  std::vector<double> metrics(std::size_t index, const WorkCount& work, double seconds) const override {
    const double rate = teraflops_per_second(work.flops, seconds);
    const double peak = cases_[index].shape.in_type == DataType::FP8_E4M3 ? peak_fp8_ : peak_bf16_;
    return {rate, peak > 0 ? rate / peak * 100.0 : 0.0, static_cast<double>(sets_), host_us_,
            ex_us_ > 0 && lt_us_ > 0 ? ex_us_ / lt_us_ : 0.0};
  }

  ErrorTally verify(std::size_t index) override {
    const MatmulShape& shape = cases_[index].shape;
    const std::size_t last = (iteration_ + sets_ - 1) % sets_;
    // bf16 output rounding alone is up to 2^-9 relative; 1e-2 of sum|a·b| leaves room for fp32 accumulation.
    return verify_matmul_samples(shape, x_[last].get(), w_[last].get(), y_.get(),
                                 static_cast<int>(options_.samples),
                                 static_cast<std::uint64_t>(common_.seed) + index, 1e-2, stream_);
  }

  void release(std::size_t) override {
#if !defined(MOESIM_USE_HIP)
    gemm_ex_.reset();
#endif
    matmul_.reset();
    x_.clear();
    w_.clear();
    y_.reset();
  }

  void set_peaks(double bf16, double fp8) {
    peak_bf16_ = bf16;
    peak_fp8_ = fp8;
  }

 private:
  void enqueue(std::size_t set) {
#if !defined(MOESIM_USE_HIP)
    if (use_gemm_ex_) {
      CUBLAS_CHECK(gemm_ex_->run(x_[set].get(), w_[set].get(), y_.get()));
      return;
    }
#endif
    matmul_->run(x_[set].get(), w_[set].get(), y_.get(), workspace_.get(), stream_);
  }

  /**
   * cuBLASLt's pick against cublasGemmEx on the first input set: each warmed up, then two alternating rounds
   * of ~1 ms of back-to-back calls, the better round of each kept (unlocked clocks drift between rounds).
   */
  void compare_with_gemm_ex(const MatmulShape& shape) {
    lt_us_ = ex_us_ = 0;
    use_gemm_ex_ = false;
#if !defined(MOESIM_USE_HIP)
    if (!options_.gemm_ex || shape.in_type != DataType::BF16) return;
    gemm_ex_ = std::make_unique<CublasGemm>(shape, stream_, workspace_);
    const auto lt = [&] {
      matmul_->run(x_[0].get(), w_[0].get(), y_.get(), workspace_.get(), stream_);
      return true;
    };
    const auto ex = [&] {
      return gemm_ex_->run(x_[0].get(), w_[0].get(), y_.get()) == CUBLAS_STATUS_SUCCESS;
    };
    lt();
    if (!ex()) return;  // no candidate for this shape
    const int runs = runs_for_one_ms(mean_call_ms(stream_, 3, lt), 3);
    float lt_ms = 0, ex_ms = 0;
    for (int round = 0; round < 2; ++round) {
      const float lt_round = mean_call_ms(stream_, runs, lt), ex_round = mean_call_ms(stream_, runs, ex);
      lt_ms = round == 0 ? lt_round : std::min(lt_ms, lt_round);
      ex_ms = round == 0 ? ex_round : std::min(ex_ms, ex_round);
    }
    lt_us_ = 1e3 * lt_ms;
    ex_us_ = ex_ms > 0 ? 1e3 * ex_ms : 0;
    use_gemm_ex_ = ex_us_ > 0 && ex_us_ < lt_us_;
#else
    (void)shape;
#endif
  }

  void add_model_gemms() {
    try {
      for (ModelGemmCase& c :
           model_gemm_cases(options_.shapes, options_.attn_tokens, options_.expert_tokens)) {
        const std::size_t first = cases_.size();
        add("models", c.name, c.m, c.n, c.k);  // one case per --dtypes entry that applies (bf16)
        for (std::size_t i = first; i < cases_.size(); ++i) cases_[i].uses = c.uses;
      }
    } catch (const std::invalid_argument& error) {
      throw ArgError(std::string("--shapes ") + error.what());
    }
  }

  void add(const std::string& group, const std::string& name, std::int64_t m, std::int64_t n,
           std::int64_t k) {
    for (const std::string& dtype : split(options_.dtypes)) {
      MatmulShape shape;
      shape.m = m;
      shape.n = n;
      shape.k = k;
      if (dtype == "fp8") {
        // fp8 only where it is used: expert and square GEMMs.
        if (group != "expert" && group != "square") continue;
        shape.in_type = DataType::FP8_E4M3;
      } else if (dtype != "bf16") {
        throw ArgError("--dtypes: unknown type '" + dtype + "' (bf16, fp8)");
      }
      cases_.push_back({group, name, shape});
    }
  }

  void build_cases() {
    const std::vector<std::string> groups = split(options_.groups);
    if (has(groups, "attn")) {
      for (std::int64_t hidden : {2048, 4096, 5120, 7168}) {
        for (std::int64_t tokens : options_.attn_tokens) {
          add("attn", "qkv_h" + std::to_string(hidden), tokens, 3 * hidden, hidden);
          add("attn", "out_h" + std::to_string(hidden), tokens, hidden, hidden);
        }
      }
    }
    if (has(groups, "expert")) {
      const std::pair<std::int64_t, std::int64_t> experts[] = {{768, 2048},  {1408, 2048}, {1536, 4096},
                                                               {1536, 5120}, {2048, 2048}, {2048, 7168},
                                                               {8192, 5120}, {14336, 4096}};
      for (const auto& [ffn, hidden] : experts) {
        const std::string tag = "f" + std::to_string(ffn) + "_h" + std::to_string(hidden);
        for (std::int64_t tokens : options_.expert_tokens) {
          add("expert", "up_" + tag, tokens, 2 * ffn, hidden);
          add("expert", "down_" + tag, tokens, hidden, ffn);
        }
      }
    }
    if (has(groups, "mla")) {
      for (std::int64_t tokens : options_.attn_tokens) {
        add("mla", "q_a_7168_1536", tokens, 1536, 7168);
        add("mla", "q_b_1536_24576", tokens, 128 * 192, 1536);
        add("mla", "kv_a_7168_576", tokens, 576, 7168);
        add("mla", "kv_b_512_32768", tokens, 128 * 256, 512);
        add("mla", "o_16384_7168", tokens, 7168, 128 * 128);
      }
    }
    if (has(groups, "square")) add("square", "square_8192", 8192, 8192, 8192);
    if (has(groups, "models")) add_model_gemms();
  }

  Options options_;
  const CommonOptions& common_;
  int device_;
  cudaStream_t stream_ = nullptr;
  std::size_t l2_bytes_ = 0;
  LtHandle handle_;
  DeviceBuffer workspace_;
  std::vector<GemmCase> cases_;
  std::unique_ptr<LtMatmul> matmul_;
  std::vector<DeviceBuffer> x_;
  std::vector<DeviceBuffer> w_;
  DeviceBuffer y_;
  std::size_t sets_ = 1;
  std::size_t iteration_ = 0;
  double host_us_ = 0;  ///< host enqueue cost of one product, for the metrics row
#if !defined(MOESIM_USE_HIP)
  std::unique_ptr<CublasGemm> gemm_ex_;
#endif
  double lt_us_ = 0, ex_us_ = 0;  ///< the two candidates on the first set (0: not timed)
  bool use_gemm_ex_ = false;
  double peak_bf16_ = 0;
  double peak_fp8_ = 0;
};

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session("gemm", "cuBLASLt GEMMs over MoE shapes: TFLOP/s and efficiency vs datasheet peak");
  GemmBench::Options options;
  bool no_gemm_ex = false;
  CliOptions& parser = session.parser();
  parser.add_string("groups", 0, &options.groups, "shape groups: attn,expert,mla,square,models");
  parser.add_string("dtypes", 0, &options.dtypes, "input types: bf16,fp8 (fp8: expert and square only)");
  parser.add_int_list("attn_tokens", 0, &options.attn_tokens,
                      "token counts of attention and MLA projections");
  parser.add_int_list("expert_tokens", 0, &options.expert_tokens, "rows through one expert (M)");
  parser.add_double("peak_bf16_tflops", 0, &options.peak_bf16_tflops, "bf16 peak (0: datasheet by GPU name)");
  parser.add_double("peak_fp8_tflops", 0, &options.peak_fp8_tflops, "fp8 peak (0: datasheet by GPU name)");
  parser.add_int("samples", 0, &options.samples, "outputs recomputed in fp64 per case", 1);
  parser.add_int(
      "algos", 0, &options.algos,
      "cuBLASLt heuristic algorithms timed per shape, the fastest kept (1: the heuristic's first choice)", 1);
  parser.add_flag("no_gemm_ex", 0, &no_gemm_ex, "time cuBLASLt only (no cublasGemmEx candidate)");
  parser.add_string("shapes", 0, &options.shapes,
                    "models group: the GEMM list (tools/model_gemm_shapes.json)");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    options.gemm_ex = !no_gemm_ex;
    s.open({{"cuBLASLt", blaslt_version()}});
    const int device = s.devices().front();
    const std::string name = describe_gpu(device).name;
    const auto peak = datasheet_peak(name);
    double bf16 = options.peak_bf16_tflops;
    double fp8 = options.peak_fp8_tflops;
    if (peak) {
      if (bf16 == 0) bf16 = peak->bf16_dense_tflops;
      if (fp8 == 0) fp8 = peak->fp8_dense_tflops;
      s.log().comment("Peak: " + peak->part + " datasheet dense bf16 " + format_fixed(bf16, 1) + ", fp8 " +
                      format_fixed(fp8, 1) + " TFLOP/s");
    } else if (bf16 == 0) {
      s.log().warning("unknown GPU '" + name + "': no datasheet peak, efficiency column is 0");
    }
    s.log().add_context("peak_bf16_tflops", bf16);
    s.log().add_context("peak_fp8_tflops", fp8);
    GemmBench bench(options, s.options(), device);
    bench.set_peaks(bf16, fp8);
    run_cases(s, bench);
  });
}
