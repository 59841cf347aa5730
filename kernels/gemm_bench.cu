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
#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>

#include "BenchRunner.hpp"
#include "DeviceInfo.hpp"
#include "LtMatmul.hpp"
#include "OperandSets.hpp"
#include "moesim/kernels/DatasheetPeaks.hpp"

namespace moesim::kernels {
namespace {

struct GemmCase {
  std::string group;
  std::string name;
  MatmulShape shape;
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
    return {{"rate", "TFLOP/s", 9}, {"peak", "%", 6}, {"sets", "", 4}, {"host", "us", 6}};
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
      for (int i = 0; i < kCalls; ++i)
        matmul_->run(x_[0].get(), w_[0].get(), y_.get(), workspace_.get(), stream_);
      const auto end = std::chrono::steady_clock::now();
      batches.push_back(std::chrono::duration<double, std::micro>(end - start).count() / kCalls);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::sort(batches.begin(), batches.end());
    return batches[batches.size() / 2];
  }

  void run(std::size_t) override {
    const std::size_t set = iteration_++ % sets_;
    matmul_->run(x_[set].get(), w_[set].get(), y_.get(), workspace_.get(), stream_);
  }

  std::vector<DeviceStream> streams() const override { return {{device_, stream_}}; }
  bool is_graph_capturable() const override { return true; }

  WorkCount bytes_and_flops(std::size_t index) const override {
    return {cases_[index].shape.min_bytes(), cases_[index].shape.flops()};
  }

  std::vector<double> metrics(std::size_t index, const WorkCount& work, double seconds) const override {
    const double rate = teraflops_per_second(work.flops, seconds);
    const double peak = cases_[index].shape.in_type == DataType::FP8_E4M3 ? peak_fp8_ : peak_bf16_;
    return {rate, peak > 0 ? rate / peak * 100.0 : 0.0, static_cast<double>(sets_), host_us_};
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
  double peak_bf16_ = 0;
  double peak_fp8_ = 0;
};

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session("gemm", "cuBLASLt GEMMs over MoE shapes: TFLOP/s and efficiency vs datasheet peak");
  GemmBench::Options options;
  CliOptions& parser = session.parser();
  parser.add_string("groups", 0, &options.groups, "shape groups: attn,expert,mla,square");
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
  return bench_main(argc, argv, session, [&](BenchSession& s) {
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
