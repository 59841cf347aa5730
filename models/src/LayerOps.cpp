#include "moesim/models/LayerOps.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <utility>

#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::models {
namespace {

// Causal attention computes only the lower triangle of the s×s score matrix: s²/2 query-key pairs.
constexpr double kCausalFraction = 0.5;
// FlashAttention-2 (Dao, 2023): the backward pass runs 5 matmuls to the forward's 2, so its FLOPs are
// 2.5× forward (the convention of the FA2 repository's benchmarks/benchmark_flash_attention.py).
constexpr double kAttentionBackwardFactor = 2.5;
// Backward of a bandwidth-bound kernel reads the forward input and the output gradient and writes the
// input gradient: about twice the forward traffic.
constexpr double kMemoryBackwardFactor = 2.0;
// Router output per token-expert entry: int32 expert index + fp32 probability.
constexpr double kRouteEntryBytes = 8.0;
// Combine weights (fp32) read by UNPERMUTE and FlashAttention's fp32 statistics / dQ accumulator.
constexpr double kFp32Bytes = 4.0;

constexpr std::array<const char*, 14> kLayerOpNames = {
    "attn_norm", "attn_qkv",     "attn_core",      "attn_out",  "mlp_norm",
    "gate",      "permute",      "routed_experts", "unpermute", "shared_experts",
    "dense_ffn", "residual_add", "model_inputs",   "final_norm"};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Collects the kernels of one op, naming them "<op>.<kernel>" and sizing them in the op's dtype.
class KernelList {
 public:
  KernelList(LayerOp op, DType dtype)
      : prefix_(to_string(op) + "."), element_bytes_(bytes_per_element(dtype)) {}

  double element_bytes() const { return element_bytes_; }
  std::vector<KernelCost>& kernels() { return kernels_; }

  void gemm(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k) {
    const double rows = m, columns = n, depth = k;
    KernelCost& kernel = add(name, KernelClass::GEMM);
    kernel.gemm = {m, n, k, 1};
    kernel.flops = 2.0 * rows * columns * depth;
    kernel.bytes = (rows * depth + depth * columns + rows * columns) * element_bytes_;
  }

  // One launch over the local experts; rows[e] rows for expert e. Experts with no rows read no weights.
  void grouped_gemm(const std::string& name, const std::vector<std::int64_t>& rows, std::int64_t n,
                    std::int64_t k) {
    const auto groups = static_cast<std::int64_t>(rows.size());
    const double total_rows = std::accumulate(rows.begin(), rows.end(), std::int64_t{0});
    const double active_groups =
        std::count_if(rows.begin(), rows.end(), [](std::int64_t r) { return r > 0; });
    const double columns = n, depth = k;
    KernelCost& kernel = add(name, KernelClass::GROUPED_GEMM);
    kernel.gemm = {std::llround(total_rows / static_cast<double>(groups)), n, k, groups};
    kernel.flops = 2.0 * total_rows * columns * depth;
    kernel.bytes =
        (total_rows * depth + active_groups * depth * columns + total_rows * columns) * element_bytes_;
  }

  // Reads the router's logits, writes an index and a weight per choice; where the profile has no
  // router_topk table it is priced as this HBM traffic.
  void router_topk(std::int64_t tokens, std::int64_t experts, std::int64_t top_k) {
    KernelCost& kernel = add("softmax_topk", KernelClass::ROUTER_TOPK);
    kernel.route = {tokens, experts, top_k};
    kernel.bytes = static_cast<double>(tokens) * (static_cast<double>(experts) * element_bytes_ +
                                                  static_cast<double>(top_k) * kRouteEntryBytes);
  }

  void memory(const std::string& name, double bytes_read, double bytes_written) {
    add(name, KernelClass::MEMORY).bytes = bytes_read + bytes_written;
  }

  KernelCost& add(const std::string& name, KernelClass kind) {
    KernelCost& kernel = kernels_.emplace_back();
    kernel.name = prefix_ + name;
    kernel.kind = kind;
    return kernel;
  }

 private:
  std::string prefix_;
  double element_bytes_;
  std::vector<KernelCost> kernels_;
};

// Backward of a forward kernel list without attention kernels; see the LayerOps.hpp conventions.
std::vector<KernelCost> backward_kernels(const std::vector<KernelCost>& forward, Pass pass) {
  std::vector<KernelCost> backward;
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    KernelCost kernel = *it;
    const GemmShape& f = it->gemm;
    switch (kernel.kind) {
      case KernelClass::GEMM:
      case KernelClass::GROUPED_GEMM:
        // DGRAD: dX[m,k] = dY[m,n]·Wᵀ[n,k]. WGRAD: dW[k,n] = Xᵀ[k,m]·dY[m,n]. Same FLOPs and operands.
        kernel.gemm =
            pass == Pass::DGRAD ? GemmShape{f.m, f.k, f.n, f.groups} : GemmShape{f.k, f.n, f.m, f.groups};
        break;
      case KernelClass::ROUTER_TOPK:  // its backward is the softmax's: a bandwidth pass, no selection
        kernel.kind = KernelClass::MEMORY;
        [[fallthrough]];
      case KernelClass::MEMORY:
        if (pass == Pass::WGRAD) continue;
        kernel.bytes *= kMemoryBackwardFactor;
        break;
      case KernelClass::ATTENTION:
        MOE_CHECK(false) << kernel.name << ": attention backward is built by attention_core_kernels";
    }
    kernel.name.append(".").append(to_string(pass));
    backward.push_back(std::move(kernel));
  }
  return backward;
}

struct LocalHeads {
  std::int64_t query = 0;
  std::int64_t key_value = 0;
};

// Heads this rank holds under attention TP; GQA kv heads are replicated when tp exceeds them (Megatron).
LocalHeads local_heads(const ModelSpec& spec, int tp) {
  const AttentionSpec& attention = spec.attention;
  if (tp < 1 || attention.heads % tp != 0) {
    throw ScheduleError("attention tp = " + std::to_string(tp) + " must be >= 1 and divide the " +
                        std::to_string(attention.heads) + " heads of " + spec.name);
  }
  return {attention.heads / tp, ceil_div(attention.kv_heads, tp)};
}

void attention_qkv_kernels(const ModelSpec& spec, const OpContext& context, KernelList& list) {
  const AttentionSpec& a = spec.attention;
  const LocalHeads heads = local_heads(spec, context.tp);
  const std::int64_t tokens = context.tokens;
  const double element = list.element_bytes();
  if (a.type != AttentionType::MLA) {
    list.gemm("qkv_proj", tokens, (heads.query + 2 * heads.key_value) * a.head_dim, spec.hidden);
    const double rotated_values = tokens * (heads.query + heads.key_value) * a.head_dim;
    const double rotated = rotated_values * element;
    list.memory("rope", rotated, rotated);
    return;
  }
  // MLA under TP (vLLM, Megatron): the down-projections to the latents are replicated, the
  // up-projections are column-parallel.
  const std::int64_t query_width = heads.query * a.qk_head_dim();
  if (a.q_lora_rank == 0) {
    list.gemm("q_proj", tokens, query_width, spec.hidden);
  } else {
    list.gemm("q_a_proj", tokens, a.q_lora_rank, spec.hidden);
    const double latent = static_cast<double>(tokens * a.q_lora_rank) * element;
    list.memory("q_a_norm", latent, latent);
    list.gemm("q_b_proj", tokens, query_width, a.q_lora_rank);
  }
  list.gemm("kv_a_proj", tokens, a.kv_lora_rank + a.rope_head_dim, spec.hidden);
  const double kv_latent = static_cast<double>(tokens * a.kv_lora_rank) * element;
  list.memory("kv_a_norm", kv_latent, kv_latent);
  list.gemm("kv_b_proj", tokens, heads.query * (a.head_dim + a.v_head_dim), a.kv_lora_rank);
  // RoPE touches the rotary part of every query head and the one key rotary part all heads share.
  const double rotated = static_cast<double>(tokens * (heads.query + 1) * a.rope_head_dim) * element;
  list.memory("rope", rotated, rotated);
}

// Score pairs of the first n positions of a sequence (every query from the start), the diagonal half.
double pairs_from_start(double n, AttentionWindow window, double w) {
  switch (window) {
    case AttentionWindow::FULL:
      return n * n * kCausalFraction;
    case AttentionWindow::SLIDING:
      return n <= w ? n * n * kCausalFraction : w * w * kCausalFraction + (n - w) * w;
    case AttentionWindow::CHUNKED: {
      const double whole_chunks = std::floor(n / w), rest = n - whole_chunks * w;
      return (whole_chunks * w * w + rest * rest) * kCausalFraction;
    }
  }
  return 0;
}

// Keys of one sequence some query reads: the window's reach back from the first query, and everything after.
double keys_read(const OpContext& c) {
  const auto seq = static_cast<double>(c.seq_len), prefix = static_cast<double>(c.prefix_len);
  const auto w = static_cast<double>(c.window_tokens);
  switch (c.window) {
    case AttentionWindow::FULL:
      return prefix + seq;
    case AttentionWindow::SLIDING:
      return std::min(prefix, w - 1) + seq;
    case AttentionWindow::CHUNKED:
      return prefix - std::floor(prefix / w) * w + seq;
  }
  return 0;
}

void attention_core_kernels(const ModelSpec& spec, Pass pass, const OpContext& context, KernelList& list) {
  if (pass == Pass::WGRAD) return;  // attention has no weights
  if (context.seq_len <= 0 || context.tokens % context.seq_len != 0 || context.prefix_len < 0) {
    throw ScheduleError("attention needs seq_len > 0 dividing tokens and prefix_len >= 0 (tokens = " +
                        std::to_string(context.tokens) + ", seq_len = " + std::to_string(context.seq_len) +
                        ", prefix_len = " + std::to_string(context.prefix_len) + ")");
  }
  const LocalHeads heads = local_heads(spec, context.tp);
  const auto& a = spec.attention;
  // MLA over a KV cache (decode) runs absorbed, as FlashMLA does (DeepSeek-V2 §2.1.3): the up-projections
  // fold into the query and the output, so every head attends over the cached latent itself, one
  // (kv_lora_rank + rope) key per position shared by all heads, whose first kv_lora_rank columns are the
  // value.
  const bool absorbed = a.type == AttentionType::MLA && context.prefix_len > 0;
  const std::int64_t kv_heads = absorbed ? 1 : a.type == AttentionType::MLA ? heads.query : heads.key_value;
  const double d_qk = absorbed ? a.kv_lora_rank + a.rope_head_dim : a.qk_head_dim();
  const double d_v = absorbed ? a.kv_lora_rank : a.value_head_dim();
  const double tokens = context.tokens;
  const double query_heads = heads.query, key_value_heads = kv_heads;
  const double sequences = tokens / static_cast<double>(context.seq_len);
  const double pairs =
      attention_score_pairs(context.seq_len, context.prefix_len, context.window, context.window_tokens);
  const double forward_flops = 2.0 * sequences * pairs * query_heads * (d_qk + d_v);

  const double element = list.element_bytes();
  const double keys = sequences * keys_read(context);
  const double q = tokens * query_heads * d_qk * element;
  const double k = keys * key_value_heads * d_qk * element;
  const double v = absorbed ? 0.0 : keys * key_value_heads * d_v * element;  // absorbed: V is K's latent part
  const double o = tokens * query_heads * d_v * element;
  const double row_stats = tokens * query_heads * kFp32Bytes;
  auto add_attention = [&](const std::string& name, double flops, double bytes) {
    KernelCost& kernel = list.add(name, KernelClass::ATTENTION);
    kernel.flops = flops;
    kernel.bytes = bytes;
    kernel.attn_seq = context.seq_len;
    kernel.attn_prefix = context.prefix_len;
    kernel.attn_score_pairs = pairs;
    if (context.window != AttentionWindow::FULL)
      kernel.attn_row_keys = pairs / static_cast<double>(context.seq_len);
    kernel.attn_head_dim = static_cast<std::int64_t>(d_qk);
    kernel.attn_batch_heads = std::llround(sequences * query_heads);
  };
  if (pass == Pass::FORWARD) {
    add_attention("flash_fwd", forward_flops, q + k + v + o + row_stats);
    return;
  }
  // FlashAttention-2/3 backward launches three kernels: D = rowsum(dO∘O); the main kernel, which
  // accumulates dQ in fp32; and the conversion of dQ to the working dtype.
  list.memory("flash_bwd_preprocess.dgrad", 2.0 * o, row_stats);
  const double dq_accumulator = q / element * kFp32Bytes;
  add_attention("flash_bwd.dgrad", kAttentionBackwardFactor * forward_flops,
                (q + k + v + o) + 2.0 * row_stats + (k + v) + dq_accumulator);
  list.memory("flash_bwd_convert_dq.dgrad", dq_accumulator, q);
}

// fc1 (H → ffn, or 2·ffn gate+up for SwiGLU), the activation, fc2 (ffn → H); rows[e] rows for expert e.
void mlp_kernels(const ModelSpec& spec, const std::vector<std::int64_t>& rows, std::int64_t ffn, bool grouped,
                 KernelList& list) {
  const bool gated = spec.activation == Activation::SWIGLU;
  const std::int64_t fc1_columns = gated ? 2 * ffn : ffn;
  const double total_rows = std::accumulate(rows.begin(), rows.end(), std::int64_t{0});
  const double fc1_width = fc1_columns, ffn_width = ffn;
  const double element = list.element_bytes();
  if (grouped) {
    list.grouped_gemm("fc1", rows, fc1_columns, spec.hidden);
  } else {
    list.gemm("fc1", rows.at(0), fc1_columns, spec.hidden);
  }
  list.memory(to_string(spec.activation), total_rows * fc1_width * element, total_rows * ffn_width * element);
  if (grouped) {
    list.grouped_gemm("fc2", rows, spec.hidden, ffn);
  } else {
    list.gemm("fc2", rows.at(0), spec.hidden, ffn);
  }
}

// Rows per local expert: context.expert_tokens, or routed_rows spread evenly (remainder to the first
// experts).
std::vector<std::int64_t> local_expert_rows(const OpContext& context) {
  if (!context.expert_tokens.empty()) {
    MOE_CHECK(context.experts_total_local == 0 ||
              context.experts_total_local == static_cast<int>(context.expert_tokens.size()))
        << "experts_total_local = " << context.experts_total_local << " but expert_tokens has "
        << context.expert_tokens.size() << " entries";
    for (std::int64_t rows : context.expert_tokens) {
      MOE_CHECK(rows >= 0) << "negative expert_tokens entry " << rows;
    }
    return context.expert_tokens;
  }
  const std::int64_t experts = context.experts_total_local;
  std::vector<std::int64_t> rows(static_cast<std::size_t>(experts), 0);
  for (std::int64_t e = 0; e < experts; ++e) {
    rows[static_cast<std::size_t>(e)] =
        context.routed_rows / experts + (e < context.routed_rows % experts ? 1 : 0);
  }
  return rows;
}

void feed_forward_kernels(const ModelSpec& spec, LayerOp op, const OpContext& context, KernelList& list) {
  const std::vector<std::int64_t> all_tokens = {context.tokens};
  if (op == LayerOp::ROUTED_EXPERTS) {
    const std::vector<std::int64_t> rows = local_expert_rows(context);
    if (rows.empty()) return;
    const bool regroup = context.regroup_by_expert && rows.size() > 1;
    const double routed = static_cast<double>(std::accumulate(rows.begin(), rows.end(), std::int64_t{0})) *
                          spec.hidden * list.element_bytes();
    if (regroup) list.memory("group_by_expert", routed, routed);
    if (context.expert_loop) {
      for (std::int64_t expert_rows : rows) {
        if (expert_rows > 0) mlp_kernels(spec, {expert_rows}, spec.moe.expert_ffn, /*grouped=*/false, list);
      }
    } else {
      mlp_kernels(spec, rows, spec.moe.expert_ffn, /*grouped=*/true, list);
    }
    if (regroup) list.memory("group_by_source", routed, routed);
  } else if (op == LayerOp::SHARED_EXPERTS) {
    const std::int64_t width = std::int64_t{spec.moe.shared_experts} * spec.moe.shared_ffn;
    if (width > 0) mlp_kernels(spec, all_tokens, width, /*grouped=*/false, list);
  } else if (op == LayerOp::DENSE_FFN) {
    if (spec.dense_ffn > 0) mlp_kernels(spec, all_tokens, spec.dense_ffn, /*grouped=*/false, list);
  }
}

// Every op except ATTN_CORE, forward; the backward passes are derived from it.
void forward_kernels(const ModelSpec& spec, LayerOp op, const OpContext& context, KernelList& list) {
  const double element = list.element_bytes();
  const double tokens = context.tokens, routed_rows = context.routed_rows;
  const double activations = tokens * spec.hidden * element;
  const double routed = routed_rows * spec.hidden * element;
  switch (op) {
    case LayerOp::ATTN_NORM:
    case LayerOp::MLP_NORM:
    case LayerOp::FINAL_NORM:
      list.memory(to_string(spec.norm), activations * (1 + context.norm_extra_inputs), activations);
      return;
    case LayerOp::ATTN_QKV:
      attention_qkv_kernels(spec, context, list);
      return;
    case LayerOp::ATTN_OUT: {
      const LocalHeads heads = local_heads(spec, context.tp);
      list.gemm("out_proj", context.tokens, spec.hidden, heads.query * spec.attention.value_head_dim());
      return;
    }
    case LayerOp::GATE:
      list.gemm("router", context.tokens, spec.moe.experts, spec.hidden);
      list.router_topk(context.tokens, spec.moe.experts, spec.moe.top_k);
      return;
    case LayerOp::PERMUTE:
      list.memory("permute", routed, routed);
      return;
    case LayerOp::UNPERMUTE:
      list.memory("unpermute", routed + routed_rows * kFp32Bytes, activations);
      return;
    case LayerOp::ROUTED_EXPERTS:
    case LayerOp::SHARED_EXPERTS:
    case LayerOp::DENSE_FFN:
      feed_forward_kernels(spec, op, context, list);
      return;
    case LayerOp::RESIDUAL_ADD:
      list.memory("add", 2.0 * activations, activations);
      return;
    case LayerOp::MODEL_INPUTS:
      return;
    case LayerOp::ATTN_CORE:
      break;
  }
  MOE_CHECK(false) << "forward_kernels cannot build " << to_string(op);
}

}  // namespace

std::vector<KernelCost> layer_op_kernels(const ModelSpec& spec, LayerOp op, Pass pass,
                                         const OpContext& context) {
  MOE_CHECK(context.tokens >= 0 && context.routed_rows >= 0 && context.experts_total_local >= 0 &&
            context.norm_extra_inputs >= 0)
      << "negative size in OpContext for " << to_string(op);
  KernelList list(op, context.dtype);
  std::vector<KernelCost> kernels;
  if (op == LayerOp::ATTN_CORE) {
    attention_core_kernels(spec, pass, context, list);
    kernels = std::move(list.kernels());
  } else {
    forward_kernels(spec, op, context, list);
    kernels = pass == Pass::FORWARD ? std::move(list.kernels()) : backward_kernels(list.kernels(), pass);
  }
  for (KernelCost& kernel : kernels) kernel.backward = pass != Pass::FORWARD;
  return kernels;
}

std::string to_string(LayerOp op) {
  const auto index = static_cast<std::size_t>(op);
  MOE_CHECK(index < kLayerOpNames.size()) << "unknown LayerOp " << index;
  return kLayerOpNames[index];
}

double attention_score_pairs(std::int64_t seq, std::int64_t prefix, AttentionWindow window,
                             std::int64_t window_tokens) {
  MOE_CHECK(window == AttentionWindow::FULL || window_tokens > 0) << "a window needs window_tokens > 0";
  const auto w = static_cast<double>(window_tokens), start = static_cast<double>(prefix);
  return pairs_from_start(start + static_cast<double>(seq), window, w) - pairs_from_start(start, window, w);
}

std::string to_string(Pass pass) {
  switch (pass) {
    case Pass::FORWARD:
      return "forward";
    case Pass::DGRAD:
      return "dgrad";
    case Pass::WGRAD:
      return "wgrad";
  }
  MOE_CHECK(false) << "unknown Pass " << static_cast<int>(pass);
  return {};
}

std::string to_string(KernelClass kind) {
  switch (kind) {
    case KernelClass::GEMM:
      return "gemm";
    case KernelClass::GROUPED_GEMM:
      return "grouped_gemm";
    case KernelClass::ATTENTION:
      return "attention";
    case KernelClass::MEMORY:
      return "memory";
    case KernelClass::ROUTER_TOPK:
      return "router_topk";
  }
  MOE_CHECK(false) << "unknown KernelClass " << static_cast<int>(kind);
  return {};
}

}  // namespace moesim::models
