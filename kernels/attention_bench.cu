// attention_bench: causal self-attention forward and backward, unfused ("math" attention):
// cuBLASLt strided-batched GEMMs over B·H heads plus our softmax kernels, the way frameworks
// run attention without a fused kernel. Head dims 128/128 (MHA/GQA) and 192/128 (MLA: q/k 192,
// v 128). tools/torch_sdpa_compare.py times torch SDPA (flash, cuDNN, efficient backends) on the
// same shapes for comparison.
//
//   forward   S = QKᵀ/√d (fp32) -> P = causal softmax(S) (bf16) -> O = P·V
//   backward  dP = dO·Vᵀ, dV = Pᵀ·dO, dS = P∘(dP − rowsum(dO∘O))/√d, dQ = dS·K, dK = dSᵀ·Q
// FLOPs are counted for the causal half only (FlashAttention's convention):
//   forward 2·B·H·L²·(d_qk + d_v)/2, backward 2·B·H·L²·(2·d_qk + 2·d_v)/2 (no recomputation).
// The unfused path computes the masked half too, so its TFLOP/s are low by design.
#include <cmath>
#include <memory>

#include "BenchRunner.hpp"
#include "LayerKernels.hpp"
#include "LtMatmul.hpp"

namespace moesim::kernels {
namespace {

constexpr int kThreads = 256;

// D[row] = dO[row] · O[row]; one warp per row.
__global__ void row_dot_kernel(const bf16_t* d_out, const bf16_t* out, float* d, std::size_t rows, int dim) {
  const std::size_t row = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / warpSize;
  if (row >= rows) return;
  float sum = 0;
  for (int c = threadIdx.x % warpSize; c < dim; c += warpSize) {
    sum += bf16_to_float(d_out[row * dim + c]) * bf16_to_float(out[row * dim + c]);
  }
  for (int offset = warpSize / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % warpSize == 0) d[row] = sum;
}

// dS = P ∘ (dP − D) · scale (bf16).
__global__ void softmax_backward_kernel(const bf16_t* p, bf16_t* ds, const float* d_p, const float* d,
                                        int length, float scale) {
  const std::size_t row_index = blockIdx.x;
  const float d_row = d[row_index];
  for (int j = threadIdx.x; j < length; j += blockDim.x) {
    const std::size_t at = row_index * length + j;
    ds[at] = float_to_bf16(bf16_to_float(p[at]) * (d_p[at] - d_row) * scale);
  }
}

struct AttentionCase {
  bool backward;
  std::int64_t length, dim_qk, dim_v;
};

class AttentionBench : public CaseBench {
 public:
  AttentionBench(const CommonOptions& common, int device, std::int64_t batch_heads,
                 const std::vector<std::int64_t>& lengths)
      : common_(common), device_(device), batch_heads_(batch_heads) {
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    workspace_ = DeviceBuffer(device, LtMatmul::kWorkspaceBytes);
    for (auto [dqk, dv] : {std::pair<std::int64_t, std::int64_t>{128, 128}, {192, 128}}) {
      for (std::int64_t length : lengths) {
        for (bool backward : {false, true}) cases_.push_back({backward, length, dqk, dv});
      }
    }
  }
  ~AttentionBench() override { (void)cudaStreamDestroy(stream_); }

  std::vector<TextColumn> case_columns() const override {
    return {{"pass", "", 4}, {"BH", "", 4}, {"L", "", 6}, {"d_qk", "", 4}, {"d_v", "", 4}};
  }
  std::vector<TextColumn> metric_columns() const override { return {{"rate", "TFLOP/s", 9}}; }
  std::size_t case_count() const override { return cases_.size(); }

  CaseDescription describe(std::size_t index) const override {
    const AttentionCase& c = cases_[index];
    CaseDescription d;
    d.cells = {c.backward ? "bwd" : "fwd", std::to_string(batch_heads_), std::to_string(c.length),
               std::to_string(c.dim_qk), std::to_string(c.dim_v)};
    d.params["pass"] = c.backward ? "bwd" : "fwd";
    d.params["batch_heads"] = static_cast<long long>(batch_heads_);
    d.params["seq_len"] = static_cast<long long>(c.length);
    d.params["d_qk"] = static_cast<long long>(c.dim_qk);
    d.params["d_v"] = static_cast<long long>(c.dim_v);
    d.params["causal"] = true;
    d.params["impl"] = "unfused cuBLASLt + softmax kernels";
    return d;
  }

  void init(std::size_t index) override;
  void run(std::size_t index) override {
    if (cases_[index].backward) {
      run_backward(cases_[index]);
    } else {
      run_forward(cases_[index]);
    }
  }
  std::vector<DeviceStream> streams() const override { return {{device_, stream_}}; }
  bool is_graph_capturable() const override { return true; }

  WorkCount bytes_and_flops(std::size_t index) const override {
    const AttentionCase& c = cases_[index];
    const double pairs = static_cast<double>(batch_heads_) * c.length * c.length / 2.0;
    const double flops = 2 * pairs * static_cast<double>(c.dim_qk + c.dim_v) * (c.backward ? 2 : 1);
    return {0, flops};
  }
  std::vector<double> metrics(std::size_t, const WorkCount& work, double seconds) const override {
    return {teraflops_per_second(work.flops, seconds)};
  }
  ErrorTally verify(std::size_t index) override;
  void release(std::size_t) override {
    forward_scores_.reset();
    forward_output_.reset();
    d_scores_.reset();
    d_value_.reset();
    d_query_.reset();
    d_key_.reset();
    for (DeviceBuffer* buffer :
         {&q_, &k_, &v_, &o_, &d_o_, &s_, &p_, &ds_, &d_p_, &d_row_, &d_q_, &d_k_, &d_v_}) {
      buffer->reset();
    }
  }

 private:
  MatmulShape shape(std::int64_t m, std::int64_t n, std::int64_t k, ALayout a, BLayout b, DataType out,
                    float alpha = 1.0f) const {
    MatmulShape s;
    s.m = m;
    s.n = n;
    s.k = k;
    s.batch = batch_heads_;
    s.a_layout = a;
    s.b_layout = b;
    s.out_type = out;
    s.alpha = alpha;
    return s;
  }
  std::uint64_t seed(std::size_t index, int tensor) const {
    return static_cast<std::uint64_t>(common_.seed) + index * 16 + static_cast<std::uint64_t>(tensor);
  }

  void run_forward(const AttentionCase& c) {
    forward_scores_->run(q_.get(), k_.get(), s_.get(), workspace_.get(), stream_);
    launch_causal_softmax(s_.as<float>(), p_.as<bf16_t>(), batch_heads_ * c.length, c.length, stream_);
    forward_output_->run(p_.get(), v_.get(), o_.get(), workspace_.get(), stream_);
  }

  void run_backward(const AttentionCase& c) {
    const std::size_t rows = static_cast<std::size_t>(batch_heads_ * c.length);
    d_scores_->run(d_o_.get(), v_.get(), d_p_.get(), workspace_.get(), stream_);
    d_value_->run(p_.get(), d_o_.get(), d_v_.get(), workspace_.get(), stream_);
    row_dot_kernel<<<static_cast<unsigned>((rows * 32 + kThreads - 1) / kThreads), kThreads, 0, stream_>>>(
        d_o_.as<bf16_t>(), o_.as<bf16_t>(), d_row_.as<float>(), rows, static_cast<int>(c.dim_v));
    CUDA_CHECK_LAUNCH();
    softmax_backward_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream_>>>(
        p_.as<const bf16_t>(), ds_.as<bf16_t>(), d_p_.as<float>(), d_row_.as<float>(),
        static_cast<int>(c.length), 1.0f / std::sqrt(static_cast<float>(c.dim_qk)));
    CUDA_CHECK_LAUNCH();
    d_query_->run(ds_.get(), k_.get(), d_q_.get(), workspace_.get(), stream_);
    d_key_->run(ds_.get(), q_.get(), d_k_.get(), workspace_.get(), stream_);
  }

  const CommonOptions& common_;
  int device_;
  std::int64_t batch_heads_;
  cudaStream_t stream_ = nullptr;
  LtHandle handle_;
  DeviceBuffer workspace_;
  std::vector<AttentionCase> cases_;
  std::unique_ptr<LtMatmul> forward_scores_, forward_output_, d_scores_, d_value_, d_query_, d_key_;
  DeviceBuffer q_, k_, v_, o_, d_o_, s_, p_, ds_, d_p_, d_row_, d_q_, d_k_, d_v_;
};

// Tensors: 0 Q [BH, L, d_qk], 1 K [BH, L, d_qk], 2 V [BH, L, d_v], 3 dO [BH, L, d_v], random in [-1, 1).
void AttentionBench::init(std::size_t index) {
  const AttentionCase& c = cases_[index];
  const std::int64_t L = c.length;
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.dim_qk));
  forward_scores_ = std::make_unique<LtMatmul>(
      handle_, shape(L, L, c.dim_qk, ALayout::MK, BLayout::NK, DataType::FP32, scale));
  forward_output_ =
      std::make_unique<LtMatmul>(handle_, shape(L, c.dim_v, L, ALayout::MK, BLayout::KN, DataType::BF16));
  d_scores_ =
      std::make_unique<LtMatmul>(handle_, shape(L, L, c.dim_v, ALayout::MK, BLayout::NK, DataType::FP32));
  d_value_ =
      std::make_unique<LtMatmul>(handle_, shape(L, c.dim_v, L, ALayout::KM, BLayout::KN, DataType::BF16));
  d_query_ =
      std::make_unique<LtMatmul>(handle_, shape(L, c.dim_qk, L, ALayout::MK, BLayout::KN, DataType::BF16));
  d_key_ =
      std::make_unique<LtMatmul>(handle_, shape(L, c.dim_qk, L, ALayout::KM, BLayout::KN, DataType::BF16));
  const auto bh = static_cast<std::size_t>(batch_heads_);
  const auto rows = bh * static_cast<std::size_t>(L);
  const auto qk = rows * static_cast<std::size_t>(c.dim_qk);
  const auto vv = rows * static_cast<std::size_t>(c.dim_v);
  const auto square = rows * static_cast<std::size_t>(L);
  q_ = DeviceBuffer(device_, qk * 2);
  k_ = DeviceBuffer(device_, qk * 2);
  v_ = DeviceBuffer(device_, vv * 2);
  d_o_ = DeviceBuffer(device_, vv * 2);
  o_ = DeviceBuffer(device_, vv * 2);
  s_ = DeviceBuffer(device_, square * 4);
  p_ = DeviceBuffer(device_, square * 2);
  fill_random(q_.get(), DataType::BF16, qk, seed(index, 0), 1.0f, stream_);
  fill_random(k_.get(), DataType::BF16, qk, seed(index, 1), 1.0f, stream_);
  fill_random(v_.get(), DataType::BF16, vv, seed(index, 2), 1.0f, stream_);
  fill_random(d_o_.get(), DataType::BF16, vv, seed(index, 3), 1.0f, stream_);
  fill_constant(o_.get(), DataType::BF16, vv, NAN, stream_);
  if (c.backward) {
    run_forward(c);  // the backward pass consumes P and O
    ds_ = DeviceBuffer(device_, square * 2);
    d_p_ = DeviceBuffer(device_, square * 4);
    d_row_ = DeviceBuffer(device_, rows * 4);
    d_q_ = DeviceBuffer(device_, qk * 2);
    d_k_ = DeviceBuffer(device_, qk * 2);
    d_v_ = DeviceBuffer(device_, vv * 2);
    fill_constant(d_q_.get(), DataType::BF16, qk, NAN, stream_);
    fill_constant(d_k_.get(), DataType::BF16, qk, NAN, stream_);
    fill_constant(d_v_.get(), DataType::BF16, vv, NAN, stream_);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

/** @brief Double-precision causal attention of one head, row by row, from the seeded inputs. */
class HostAttention {
 public:
  HostAttention(std::uint64_t seed0, std::size_t head, std::int64_t length, std::int64_t dqk, std::int64_t dv)
      : length_(length), dqk_(dqk), dv_(dv), scale_(1.0 / std::sqrt(static_cast<double>(dqk))) {
    for (int tensor = 0; tensor < 4; ++tensor) {
      const std::int64_t width = tensor <= 1 ? dqk : dv;
      const std::size_t count = static_cast<std::size_t>(length * width);
      const std::size_t base = head * count;
      values_[tensor].resize(count);
      for (std::size_t i = 0; i < count; ++i) {
        values_[tensor][i] = bf16_to_float(
            float_to_bf16(random_value(seed0 + static_cast<std::uint64_t>(tensor), base + i, 1.0f)));
      }
    }
  }

  /** @brief Element (row, col) of tensor 0 Q, 1 K, 2 V or 3 dO of this head. */
  double input(int tensor, std::int64_t row, std::int64_t col) const {
    const std::int64_t width = tensor <= 1 ? dqk_ : dv_;
    return values_[tensor][static_cast<std::size_t>(row * width + col)];
  }
  /** @brief Softmax probabilities of query row i over keys 0..i. */
  std::vector<double> probabilities(std::int64_t i) const {
    std::vector<double> p(static_cast<std::size_t>(i + 1));
    double max_score = -1e300;
    for (std::int64_t j = 0; j <= i; ++j) {
      double dot = 0;
      for (std::int64_t c = 0; c < dqk_; ++c) dot += input(0, i, c) * input(1, j, c);
      p[static_cast<std::size_t>(j)] = dot * scale_;
      max_score = std::max(max_score, dot * scale_);
    }
    double sum = 0;
    for (double& value : p) sum += (value = std::exp(value - max_score));
    for (double& value : p) value /= sum;
    return p;
  }
  /** @brief O row i and its error scale sum_j p_j |v_j|. */
  void output(std::int64_t i, const std::vector<double>& p, std::vector<double>& o,
              std::vector<double>& scale) const {
    o.assign(static_cast<std::size_t>(dv_), 0);
    scale.assign(static_cast<std::size_t>(dv_), 0);
    for (std::int64_t j = 0; j <= i; ++j) {
      for (std::int64_t c = 0; c < dv_; ++c) {
        o[static_cast<std::size_t>(c)] += p[static_cast<std::size_t>(j)] * input(2, j, c);
        scale[static_cast<std::size_t>(c)] += p[static_cast<std::size_t>(j)] * std::fabs(input(2, j, c));
      }
    }
  }
  /** @brief dS row i (already scaled by 1/sqrt(d)) and the magnitudes that bound its error. */
  void d_scores(std::int64_t i, const std::vector<double>& p, std::vector<double>& ds,
                std::vector<double>& size) const {
    std::vector<double> o, unused;
    output(i, p, o, unused);
    double d = 0;
    for (std::int64_t c = 0; c < dv_; ++c) d += input(3, i, c) * o[static_cast<std::size_t>(c)];
    ds.assign(p.size(), 0);
    size.assign(p.size(), 0);
    for (std::int64_t j = 0; j <= i; ++j) {
      double dp = 0;
      for (std::int64_t c = 0; c < dv_; ++c) dp += input(3, i, c) * input(2, j, c);
      ds[static_cast<std::size_t>(j)] = p[static_cast<std::size_t>(j)] * (dp - d) * scale_;
      size[static_cast<std::size_t>(j)] =
          p[static_cast<std::size_t>(j)] * (std::fabs(dp) + std::fabs(d)) * scale_;
    }
  }

 private:
  std::vector<double> values_[4];
  std::int64_t length_, dqk_, dv_;
  double scale_;
};

std::vector<double> device_row(const DeviceBuffer& buffer, std::size_t head, std::int64_t length,
                               std::int64_t row, std::int64_t width) {
  std::vector<bf16_t> raw(static_cast<std::size_t>(width));
  const std::size_t offset = (head * static_cast<std::size_t>(length) + static_cast<std::size_t>(row)) *
                             static_cast<std::size_t>(width);
  CUDA_CHECK(cudaMemcpy(raw.data(), buffer.as<bf16_t>() + offset, raw.size() * 2, cudaMemcpyDeviceToHost));
  std::vector<double> values;
  for (bf16_t v : raw) values.push_back(bf16_to_float(v));
  return values;
}

// Checks O (forward) or dQ, dK, dV (backward) rows of the last head against HostAttention.
ErrorTally AttentionBench::verify(std::size_t index) {
  const AttentionCase& c = cases_[index];
  const std::size_t head = static_cast<std::size_t>(batch_heads_ - 1);
  const HostAttention host(seed(index, 0), head, c.length, c.dim_qk, c.dim_v);
  const std::int64_t L = c.length;
  ErrorTally tally(2e-2);
  for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, L / 3, L / 2 + 7, L - 2, L - 1}) {
    const std::vector<double> p = host.probabilities(i);
    if (!c.backward) {
      std::vector<double> o, scale;
      host.output(i, p, o, scale);
      const std::vector<double> got = device_row(o_, head, L, i, c.dim_v);
      for (std::size_t col = 0; col < got.size(); ++col) tally.add(got[col], o[col], scale[col]);
      continue;
    }
    std::vector<double> ds, size;
    host.d_scores(i, p, ds, size);
    const std::vector<double> got = device_row(d_q_, head, L, i, c.dim_qk);
    for (std::int64_t col = 0; col < c.dim_qk; ++col) {
      double ref = 0, bound = 0;
      for (std::int64_t j = 0; j <= i; ++j) {
        ref += ds[static_cast<std::size_t>(j)] * host.input(1, j, col);
        bound += size[static_cast<std::size_t>(j)] * std::fabs(host.input(1, j, col));
      }
      tally.add(got[static_cast<std::size_t>(col)], ref, bound);
    }
  }
  if (c.backward) {
    // Key rows near the end: only query rows i >= j contribute to dK_j and dV_j.
    for (std::int64_t j : {L - 1, L - 4}) {
      std::vector<double> dk(static_cast<std::size_t>(c.dim_qk), 0), dk_bound(dk.size(), 0);
      std::vector<double> dv(static_cast<std::size_t>(c.dim_v), 0), dv_bound(dv.size(), 0);
      for (std::int64_t i = j; i < L; ++i) {
        const std::vector<double> p = host.probabilities(i);
        std::vector<double> ds, size;
        host.d_scores(i, p, ds, size);
        const auto at = static_cast<std::size_t>(j);
        for (std::int64_t col = 0; col < c.dim_qk; ++col) {
          dk[static_cast<std::size_t>(col)] += ds[at] * host.input(0, i, col);
          dk_bound[static_cast<std::size_t>(col)] += size[at] * std::fabs(host.input(0, i, col));
        }
        for (std::int64_t col = 0; col < c.dim_v; ++col) {
          dv[static_cast<std::size_t>(col)] += p[at] * host.input(3, i, col);
          dv_bound[static_cast<std::size_t>(col)] += p[at] * std::fabs(host.input(3, i, col));
        }
      }
      const std::vector<double> got_k = device_row(d_k_, head, L, j, c.dim_qk);
      const std::vector<double> got_v = device_row(d_v_, head, L, j, c.dim_v);
      for (std::size_t col = 0; col < dk.size(); ++col) tally.add(got_k[col], dk[col], dk_bound[col]);
      for (std::size_t col = 0; col < dv.size(); ++col) tally.add(got_v[col], dv[col], dv_bound[col]);
    }
  }
  return tally;
}

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session("attention",
                       "causal attention fwd/bwd (unfused cuBLASLt + softmax), head dims 128 and 192/128");
  std::int64_t batch_heads = 16;
  std::vector<std::int64_t> lengths{2048, 4096, 8192};
  session.parser().add_int("batch_heads", 0, &batch_heads, "batch x heads", 1);
  session.parser().add_int_list("seq_lens", 0, &lengths, "sequence lengths L");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    s.open({{"cuBLASLt", blaslt_version()}});
    s.log().comment("FLOPs count the causal half only; the unfused path also computes the masked half");
    AttentionBench bench(s.options(), s.devices().front(), batch_heads, lengths);
    run_cases(s, bench);
  });
}
