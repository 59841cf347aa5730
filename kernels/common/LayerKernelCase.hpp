#pragma once
/**
 * @file One of the layer runner's memory-class kernels (LayerKernels.hpp) on operands of a chosen size,
 * for benchmarks that time it alone and beside communication: its operands, its launch, the HBM bytes it
 * moves and a host check of its output.
 *
 *   add      y = a + b over `bytes` bf16 operands (a streaming, HBM-bound pass)
 *   softmax  the runner's causal softmax over `bytes` of fp32 scores, 4096 keys per row
 *   rmsnorm  the runner's RMSNorm of `bytes` of bf16 rows of `width`, with `extra_inputs` (0-2) residual
 *            inputs added first (FarSkip's fused form reads one or two more tensors)
 *   topk     the runner's router: softmax, top-k of `experts` bf16 logits per token over `bytes` of
 *            logits, one atomicAdd per choice into per-expert counts
 */
#include <cstdint>
#include <string>

#include "DeviceBuffer.hpp"
#include "gpu_runtime.hpp"
#include "moesim/kernels/ErrorTally.hpp"

namespace moesim::kernels {

enum class LayerKernelKind { ADD, SOFTMAX, RMSNORM, TOPK };

/** @brief The name used on the command line and in results ("add", "softmax", "rmsnorm", "topk"). */
const char* layer_kernel_name(LayerKernelKind kind);

struct LayerKernelCase {
  LayerKernelKind kind = LayerKernelKind::ADD;
  std::uint64_t bytes = 0;    ///< the main input operand
  std::int64_t width = 2048;  ///< rmsnorm: row width
  int extra_inputs = 0;       ///< rmsnorm: residual inputs added before the norm
  int experts = 128;          ///< topk
  int top_k = 8;              ///< topk

  /** @brief Rows (add: values) the kernel processes: tokens for rmsnorm and topk. */
  std::int64_t rows() const;
  /** @brief Bytes of the input buffer (the operand and what else the kernel reads). */
  std::size_t input_bytes() const;
  /** @brief Bytes of the output buffer. */
  std::size_t output_bytes() const;
  /** @brief HBM bytes one launch reads and writes. */
  double hbm_bytes() const;
  /** @brief Shape text for results, e.g. "rmsnorm 8192x2048 +1 input" or "topk 8192 tokens 128 experts k 8".
   */
  std::string text() const;

  /** @brief Fills the inputs with random values and zeroes the outputs (stream-ordered). */
  void fill(DeviceBuffer& input, DeviceBuffer& output, std::uint64_t seed, cudaStream_t stream) const;
  void launch(DeviceBuffer& input, DeviceBuffer& output, cudaStream_t stream) const;
  /** @brief Compares sampled outputs of the last launch with the host (synchronizes the stream). */
  ErrorTally check(const DeviceBuffer& input, const DeviceBuffer& output, cudaStream_t stream) const;
};

}  // namespace moesim::kernels
