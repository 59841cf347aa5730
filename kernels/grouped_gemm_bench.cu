// grouped_gemm_bench: the expert GEMMs of one MoE layer on one GPU: E_local experts, each with
// its own weights, each multiplying the tokens routed to it (Y_e = X_e · W_eᵀ).
//
//   impl=loop     E cuBLASLt calls, one per expert, back to back on one stream (what Megatron's
//                 sequential-MLP path and a cuBLAS loop do; the time includes E launch gaps)
//   impl=batched  one strided-batched cuBLASLt call over all experts (equal tokens per expert)
//   impl=grouped  one cuBLAS grouped-batched call (cublasGemmGroupedBatchedEx, one group per expert:
//                 the variable-size API the layer runner's --experts grouped uses; CUDA builds only)
// The same data layout serves both: X [E, T, K], W [E, N, K], Y [E, T, N], row-major, bf16.
#include <memory>

#include "BenchRunner.hpp"
#include "DeviceInfo.hpp"
#include "GroupedGemm.hpp"
#include "LtMatmul.hpp"
#include "OperandSets.hpp"
#include "moesim/kernels/DatasheetPeaks.hpp"

namespace moesim::kernels {
namespace {

#if defined(MOESIM_USE_HIP)
constexpr const char* kImpls[] = {"loop", "batched"};
#else
constexpr const char* kImpls[] = {"loop", "batched", "grouped"};
#endif

struct GroupedCase {
  std::string impl;
  std::string proj;
  std::int64_t experts, tokens_per_expert, n, k;
};

class GroupedGemmBench : public CaseBench {
 public:
  GroupedGemmBench(const CommonOptions& common, int device, const std::vector<std::int64_t>& experts,
                   const std::vector<std::int64_t>& tokens,
                   const std::vector<std::pair<std::int64_t, std::int64_t>>& ffn_hidden, double peak_tflops,
                   int algos)
      : common_(common), device_(device), peak_tflops_(peak_tflops), algos_(algos) {
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    l2_bytes_ = describe_gpu(device).l2_bytes;
    workspace_ = DeviceBuffer(device, LtMatmul::kWorkspaceBytes);
#if !defined(MOESIM_USE_HIP)
    grouped_ = std::make_unique<GroupedGemm>(stream_);
#endif
    for (auto [ffn, hidden] : ffn_hidden) {
      for (std::int64_t e : experts) {
        for (std::int64_t t : tokens) {
          for (const char* impl : kImpls) {
            cases_.push_back(
                {impl, "up_f" + std::to_string(ffn) + "_h" + std::to_string(hidden), e, t, 2 * ffn, hidden});
            cases_.push_back(
                {impl, "down_f" + std::to_string(ffn) + "_h" + std::to_string(hidden), e, t, hidden, ffn});
          }
        }
      }
    }
  }
  ~GroupedGemmBench() override {
#if !defined(MOESIM_USE_HIP)
    grouped_.reset();  // before its stream
#endif
    (void)cudaStreamDestroy(stream_);
  }

  std::vector<TextColumn> case_columns() const override {
    return {{"impl", "", 7}, {"proj", "", 15}, {"E", "", 3}, {"T/E", "", 5}, {"N", "", 5}, {"K", "", 5}};
  }
  std::vector<TextColumn> metric_columns() const override {
    return {{"rate", "TFLOP/s", 9}, {"peak", "%", 6}, {"per_exp", "us", 8}};
  }
  std::size_t case_count() const override {
    return cases_.size();
  }

  CaseDescription describe(std::size_t index) const override {
    const GroupedCase& c = cases_[index];
    CaseDescription d;
    d.cells = {c.impl,
               c.proj,
               std::to_string(c.experts),
               std::to_string(c.tokens_per_expert),
               std::to_string(c.n),
               std::to_string(c.k)};
    d.params["impl"] = c.impl;
    d.params["proj"] = c.proj;
    d.params["experts"] = static_cast<long long>(c.experts);
    d.params["tokens_per_expert"] = static_cast<long long>(c.tokens_per_expert);
    d.params["n"] = static_cast<long long>(c.n);
    d.params["k"] = static_cast<long long>(c.k);
    d.params["dtype"] = "bf16";
    return d;
  }

  void init(std::size_t index) override {
    const GroupedCase& c = cases_[index];
    MatmulShape one;
    one.m = c.tokens_per_expert;
    one.n = c.n;
    one.k = c.k;
    batched_shape_ = one;
    batched_shape_.batch = c.experts;
    matmul_ = std::make_unique<LtMatmul>(handle_, c.impl == "loop" ? one : batched_shape_);
    sets_ = rotation_count(static_cast<std::size_t>(batched_shape_.min_bytes()), l2_bytes_, 8);
    const auto seed = static_cast<std::uint64_t>(common_.seed) + index * 100;
    const auto experts = static_cast<std::size_t>(c.experts);
    x_ = random_buffers(device_, sets_, experts * static_cast<std::size_t>(one.a_elements()), DataType::BF16,
                        seed, 1.0f, stream_);
    w_ = random_buffers(device_, sets_, experts * static_cast<std::size_t>(one.b_elements()), DataType::BF16,
                        seed + 50, 1.0f, stream_);
    y_ = DeviceBuffer(device_, experts * static_cast<std::size_t>(one.y_elements()) * 2);
    matmul_->autotune(x_[0].get(), w_[0].get(), y_.get(), workspace_.get(), stream_, algos_);
    grouped_case_ = c.impl == "grouped";
    if (grouped_case_) build_pointer_tables(c);
    fill_constant(y_.get(), DataType::BF16, experts * static_cast<std::size_t>(one.y_elements()), NAN,
                  stream_);
    iteration_ = 0;
  }

  void run(std::size_t index) override {
    const GroupedCase& c = cases_[index];
    const std::size_t set = iteration_++ % sets_;
    if (c.impl == "batched") {
      matmul_->run(x_[set].get(), w_[set].get(), y_.get(), workspace_.get(), stream_);
      return;
    }
    if (c.impl == "grouped") {
      run_grouped(c, set);
      return;
    }
    const MatmulShape& one = matmul_->shape();
    for (std::int64_t e = 0; e < c.experts; ++e) {
      matmul_->run(x_[set].as<bf16_t>() + e * one.a_elements(), w_[set].as<bf16_t>() + e * one.b_elements(),
                   y_.as<bf16_t>() + e * one.y_elements(), workspace_.get(), stream_);
    }
  }

  std::vector<DeviceStream> streams() const override {
    return {{device_, stream_}};
  }
  // cuBLAS's grouped call reads its host shape arrays at launch: timed as plain launches, not captured.
  bool is_graph_capturable() const override {
    return !grouped_case_;
  }
  WorkCount bytes_and_flops(std::size_t) const override {
    return {batched_shape_.min_bytes(), batched_shape_.flops()};
  }

  std::vector<double> metrics(std::size_t index, const WorkCount& work, double seconds) const override {
    const double rate = teraflops_per_second(work.flops, seconds);
    return {rate, peak_tflops_ > 0 ? rate / peak_tflops_ * 100 : 0.0,
            seconds * 1e6 / static_cast<double>(cases_[index].experts)};
  }

  ErrorTally verify(std::size_t index) override {
    const std::size_t last = (iteration_ + sets_ - 1) % sets_;
    return verify_matmul_samples(batched_shape_, x_[last].get(), w_[last].get(), y_.get(), 256,
                                 static_cast<std::uint64_t>(common_.seed) + index, 1e-2, stream_);
  }

  void release(std::size_t) override {
    pointers_.reset();
    matmul_.reset();
    x_.clear();
    w_.clear();
    y_.reset();
  }

 private:
#if defined(MOESIM_USE_HIP)
  void build_pointer_tables(const GroupedCase&) {}
  void run_grouped(const GroupedCase&, std::size_t) {}
#else
  // Per operand set: the weight, input and output pointer of every expert (the strided layout's slices).
  void build_pointer_tables(const GroupedCase& c) {
    const MatmulShape& one = matmul_->shape();
    const auto experts = static_cast<std::size_t>(c.experts);
    std::vector<void*> table;
    for (std::size_t set = 0; set < sets_; ++set) {
      for (std::size_t e = 0; e < experts; ++e) table.push_back(w_[set].as<bf16_t>() + e * one.b_elements());
      for (std::size_t e = 0; e < experts; ++e) table.push_back(x_[set].as<bf16_t>() + e * one.a_elements());
      for (std::size_t e = 0; e < experts; ++e) table.push_back(y_.as<bf16_t>() + e * one.y_elements());
    }
    pointers_ = upload_pointer_table(device_, table);
    grouped_->set_shapes(std::vector<int>(experts, static_cast<int>(c.tokens_per_expert)),
                         static_cast<int>(c.n), static_cast<int>(c.k));
  }

  void run_grouped(const GroupedCase& c, std::size_t set) {
    grouped_->run(pointers_.as<void*>() + set * 3 * static_cast<std::size_t>(c.experts));
  }

  std::unique_ptr<GroupedGemm> grouped_;
#endif
  DeviceBuffer pointers_;
  bool grouped_case_ = false;
  const CommonOptions& common_;
  int device_;
  double peak_tflops_;
  cudaStream_t stream_ = nullptr;
  std::size_t l2_bytes_ = 0;
  LtHandle handle_;
  DeviceBuffer workspace_;
  std::vector<GroupedCase> cases_;
  MatmulShape batched_shape_;
  std::unique_ptr<LtMatmul> matmul_;
  std::vector<DeviceBuffer> x_, w_;
  DeviceBuffer y_;
  std::size_t sets_ = 1;
  std::size_t iteration_ = 0;
  int algos_ = LtMatmul::kCandidates;
};

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session(
      "grouped_gemm",
      "E local experts x tokens per expert: cuBLASLt loop vs strided-batched vs cuBLAS grouped");
  std::vector<std::int64_t> experts{4, 8, 16, 32};
  std::vector<std::int64_t> tokens{128, 512, 2048};
  session.parser().add_int_list("experts", 0, &experts, "local expert counts E");
  session.parser().add_int_list("tokens_per_expert", 0, &tokens, "tokens routed to each expert");
  std::vector<std::int64_t> ffn{1408, 2048}, hidden{2048, 7168};
  session.parser().add_int_list("ffn", 0, &ffn, "expert FFN widths F (paired with --hidden)");
  session.parser().add_int_list("hidden", 0, &hidden, "hidden sizes H, one per --ffn");
  std::int64_t algos = LtMatmul::kCandidates;
  session.parser().add_int(
      "algos", 0, &algos, "cuBLASLt heuristic algorithms timed per shape, the fastest kept (1: first choice)",
      1);
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    s.open({{"cuBLASLt", blaslt_version()}});
    const int device = s.devices().front();
    const auto peak = datasheet_peak(describe_gpu(device).name);
    const double peak_tflops = peak ? peak->bf16_dense_tflops : 0.0;
    s.log().add_context("peak_bf16_tflops", peak_tflops);
    s.log().comment(
        "loop = one cuBLASLt call per expert on one stream; batched = one strided-batched call; "
        "grouped = one cuBLAS grouped-batched call (a group per expert)");
    if (ffn.size() != hidden.size())
      throw ArgError("--ffn and --hidden pair up: got " + std::to_string(ffn.size()) + " and " +
                     std::to_string(hidden.size()) + " values");
    std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
    for (std::size_t i = 0; i < ffn.size(); ++i) shapes.emplace_back(ffn[i], hidden[i]);
    GroupedGemmBench bench(s.options(), device, experts, tokens, shapes, peak_tflops,
                           static_cast<int>(algos));
    run_cases(s, bench);
  });
}
