#pragma once
/** @file Parameter counts implied by a ModelSpec, to check specs against published model sizes. */
#include <cstdint>

#include "moesim/models/ModelSpec.hpp"

namespace moesim::models {

/**
 * @brief Weights of the whole model: input embedding and output head (untied), per layer the
 * attention projections (incl. MLA latent norms), the dense FFN or the routed experts, shared
 * experts and router, the two pre-norms, and the final norm. Biases are not counted (none of the
 * shipped models except GPT-MoE has them, and there they are < 0.1%).
 */
std::int64_t total_parameters(const ModelSpec& spec);

/** @brief Weights of one attention block (projections and MLA latent norms, no pre-norm). */
std::int64_t attention_parameters(const ModelSpec& spec);

/** @brief Weights of one feed-forward MLP of intermediate width `ffn` (3·H·ffn for SwiGLU, 2·H·ffn for GELU).
 */
std::int64_t mlp_parameters(const ModelSpec& spec, std::int64_t ffn);

}  // namespace moesim::models
