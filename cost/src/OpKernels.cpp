#include "moesim/cost/OpKernels.hpp"

#include <algorithm>

#include "ImplementationKernels.hpp"

namespace moesim::cost {

std::vector<KernelPiece> op_kernels(const OpCostInputs& in, models::LayerOp op, models::Pass pass,
                                    const models::OpContext& context) {
  if (in.impl != nullptr && !in.impl->is_fused()) {
    // An op the model does not have (no shared experts, no dense FFN) launches nothing in any implementation.
    // Every model has its inputs to prepare, even where the in-tree runner launches nothing for them.
    if (op != models::LayerOp::MODEL_INPUTS &&
        models::layer_op_kernels(in.model, op, models::Pass::FORWARD, context).empty())
      return {};
    const ImplPass impl_pass = pass == models::Pass::FORWARD ? ImplPass::FORWARD : ImplPass::BACKWARD;
    if (const ImplOpEntry* entry = in.impl->find(op, impl_pass, in.model.attention.type)) {
      if (pass == models::Pass::WGRAD) return {};
      return detail::implementation_kernels(in, *entry, op, pass, context);
    }
  }
  std::vector<KernelPiece> pieces;
  for (const models::KernelCost& k : models::layer_op_kernels(in.model, op, pass, context)) {
    if (k.kind == models::KernelClass::ATTENTION && in.attention == hw::AttentionImpl::UNFUSED &&
        pass == models::Pass::FORWARD) {
      const std::int64_t head_sequences = context.tokens / std::max<std::int64_t>(context.seq_len, 1) *
                                          (in.model.attention.heads / context.tp);
      std::vector<KernelPiece> split = unfused_attention_pieces(in.hw, k, context.dtype, head_sequences);
      if (!split.empty()) split.front().flops = k.flops;
      pieces.insert(pieces.end(), std::make_move_iterator(split.begin()),
                    std::make_move_iterator(split.end()));
      continue;
    }
    pieces.push_back({k.name, kernel_work(in.hw, k, context.dtype, in.attention), launch_ns(in.hw, k),
                      k.flops, PieceKind::KERNEL});
  }
  return pieces;
}

}  // namespace moesim::cost
