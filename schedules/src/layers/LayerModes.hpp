#pragma once
/** @file Per-layer FarSkip connectivity, parsed from schedule options. */
#include <map>
#include <string>
#include <vector>

#include "ProgramBuilder.hpp"

namespace moesim::schedules::detail {

/**
 * @brief How one layer is wired (FarSkip paper §3): a converted layer's attention input skips the
 * previous layer's routed experts (so Combine can overlap it), and its MoE input skips its own
 * attention (so Dispatch can overlap it). `overlap` false is Primus' "simple" reference: FarSkip
 * connectivity, but every collective is waited for right away.
 */
struct LayerMode {
  bool skip_attn = false;  ///< attention input excludes routed_{l-1}: Combine_{l-1} overlaps attention_l
  bool skip_mlp = false;   ///< MoE input excludes attention_l: Dispatch_l overlaps attention_l
  bool overlap = true;
  /** Unconverted layers: shared experts run under Combine (Megatron's moe_shared_expert_overlap). */
  bool shared_overlap = true;
};

/**
 * @brief Layer modes for `layers` layers. `farskip` false: all regular. Options: mode=overlap|simple,
 * parts=all|attn_only|mlp_only, layers=all|first:N|last:N, shared_overlap=on|off. Bad values: ConfigError
 * at "--opt" (unknown keys are the registry's to refuse).
 */
std::vector<LayerMode> layer_modes(bool farskip, const std::map<std::string, std::string>& options,
                                   int layers);

/** @brief transport=nccl|copy_engine (default nccl): how the Dispatch/Combine all-to-alls move data. */
bool copy_engine_transport(const std::map<std::string, std::string>& options);

/**
 * @brief allreduce=bf16|quantized (default bf16): the prefill all-reduces' payload. quantized: 1-byte
 * elements (vLLM's quantized custom all-reduce on ROCm), with a quantize pass before and a dequantize pass
 * after each all-reduce on the comm stream.
 */
bool quantized_allreduce(const std::map<std::string, std::string>& options);

/** @brief a2a=flat|hierarchical (default flat) and a2a_sms=N (1 <= N < sm_count; default 0: the profile's).
 */
AllToAllAlgorithm all_to_all_algorithm(const std::map<std::string, std::string>& options, int sm_count);

/** @brief sync_splits=on|off (default on): Megatron's host sync before Dispatch. */
bool sync_splits(const std::map<std::string, std::string>& options);

}  // namespace moesim::schedules::detail
