#include <cmath>
#include <stdexcept>

#include "AttentionForward.hpp"
#include "LayerKernels.hpp"

namespace moesim::kernels {
namespace {

class UnfusedAttention : public AttentionForward {
 public:
  UnfusedAttention(const LtHandle& handle, const AttentionShape& shape, int device, std::size_t budget)
      : shape_(shape) {
    const std::int64_t batch_heads = shape.batch * shape.heads;
    const auto per_head = static_cast<std::size_t>(shape.seq * shape.seq) * (4 + 2);
    // The largest divisor of B·H whose scores fit: every chunk is the same batched product.
    chunk_ = 1;
    for (std::int64_t c = batch_heads; c >= 1; --c) {
      if (batch_heads % c == 0 && static_cast<std::size_t>(c) * per_head <= budget) {
        chunk_ = c;
        break;
      }
    }
    const auto rows = static_cast<std::size_t>(batch_heads * shape.seq);
    const auto head_elements = rows * static_cast<std::size_t>(shape.head_dim);
    for (DeviceBuffer* b : {&q_, &k_, &v_, &o_}) *b = DeviceBuffer(device, head_elements * 2);
    const auto square = static_cast<std::size_t>(chunk_ * shape.seq * shape.seq);
    scores_ = DeviceBuffer(device, square * 4);
    probabilities_ = DeviceBuffer(device, square * 2);
    MatmulShape s;
    s.m = shape.seq;
    s.n = shape.seq;
    s.k = shape.head_dim;
    s.batch = chunk_;
    s.out_type = DataType::FP32;
    s.alpha = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
    scores_product_ = std::make_unique<LtMatmul>(handle, s);
    s.n = shape.head_dim;
    s.k = shape.seq;
    s.b_layout = BLayout::KN;
    s.out_type = DataType::BF16;
    s.alpha = 1.0f;
    output_product_ = std::make_unique<LtMatmul>(handle, s);
  }

  std::string name() const override { return "unfused"; }

  void run(const bf16_t* qkv, bf16_t* out, void* workspace, cudaStream_t stream) override {
    const AttentionShape& a = shape_;
    launch_split_heads(qkv, q_.as<bf16_t>(), k_.as<bf16_t>(), v_.as<bf16_t>(), a.batch, a.seq, a.heads,
                       a.kv_heads, a.head_dim, stream);
    const auto head_elements = static_cast<std::size_t>(a.seq * a.head_dim);
    for (std::int64_t first = 0; first < a.batch * a.heads; first += chunk_) {
      const std::size_t offset = static_cast<std::size_t>(first) * head_elements;
      scores_product_->run(q_.as<bf16_t>() + offset, k_.as<bf16_t>() + offset, scores_.get(), workspace,
                           stream);
      launch_causal_softmax(scores_.as<float>(), probabilities_.as<bf16_t>(), chunk_ * a.seq, a.seq, stream);
      output_product_->run(probabilities_.get(), v_.as<bf16_t>() + offset, o_.as<bf16_t>() + offset,
                           workspace, stream);
    }
    launch_merge_heads(o_.as<bf16_t>(), out, a.batch, a.seq, a.heads, a.head_dim, stream);
  }

  std::size_t scratch_bytes() const override {
    return q_.bytes() * 4 + scores_.bytes() + probabilities_.bytes();
  }

 private:
  AttentionShape shape_;
  std::int64_t chunk_ = 1;
  DeviceBuffer q_, k_, v_, o_, scores_, probabilities_;
  std::unique_ptr<LtMatmul> scores_product_, output_product_;
};

}  // namespace

std::vector<std::string> attention_implementations() {
  return {"unfused"};
}

std::unique_ptr<AttentionForward> make_attention(const std::string& name, const LtHandle& handle,
                                                 const AttentionShape& shape, int device,
                                                 std::size_t score_budget_bytes) {
  if (name == "unfused") return std::make_unique<UnfusedAttention>(handle, shape, device, score_budget_bytes);
  throw std::invalid_argument("--attention " + name + ": expected one of: unfused");
}

}  // namespace moesim::kernels
