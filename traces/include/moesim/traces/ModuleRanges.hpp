#pragma once
/**
 * @file moesim's op ranges read from a trace's module hierarchy, so that a user's own trace of their model
 * (`torch.profiler.profile(with_stack=True)`, no `moesim.L<layer>.<op>` ranges) can be learned from as it is.
 *
 * The Python tracer records every module call ("nn.Module: <class>_<n>"), nested in time. A decoder layer is
 * the outermost call with a token-mixer child (class name with "attention"/"attn", or a hybrid model's
 * "mamba", "deltanet", "mixer", "ssm", "shortconv"...: moesim's attention op either way) followed by a child
 * that is not a norm (its MLP or MoE block; the longest such). Inside it, by position and class name, as
 * torch_stacks.annotate finds the same parts by attribute name:
 *   - norms before the mixer: attn_norm; norms after it: mlp_norm;
 *   - in the mixer: the last linear is attn_out, the others attn_qkv; an attention's norms are per-head
 *     query/key norms (qk_norm) where every projection reads the layer's input (a projection of a low-rank
 *     latent, as MLA's, makes them part of the attention: annotate leaves them there too); the rest is core
 *     attention;
 *   - in the MLP: routed experts are a child whose class names experts (not shared ones), else the class
 *     called most (twice or more), else the first MLP-like child; the gate is a router/gate class or a linear
 *     before them; other MLP-like children are shared experts; the rest of the block is the MoE remainder
 *     (`moe`). An MLP with neither routed experts nor a gate is a dense FFN;
 *   - norms of the model's call after its last layer: final_norm.
 * The forward is the call that holds the last forward's layers (`moesim.forward`); the step is the last
 * `ProfilerStep#<n>` range holding it (from that forward's start where the step held others: gradient
 * accumulation), else the forward's start to the end of the trace (`moesim.step`).
 */
#include <vector>

#include "moesim/traces/TorchTrace.hpp"

namespace moesim::traces {

/**
 * @brief Ranges named as moesim's own (moesim.step, moesim.forward, moesim.L<layer>.<op> with the op names of
 * torch_stacks.annotate) for the step of `trace` found from its module calls; empty when it has no decoder
 * layer (no module calls: a trace taken without with_stack).
 */
std::vector<Range> op_ranges_from_modules(const TorchTrace& trace);

}  // namespace moesim::traces
