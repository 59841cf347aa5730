#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "DeviceFill.hpp"
#include "GpuCheck.hpp"
#include "LayerKernelCase.hpp"
#include "LayerKernels.hpp"

namespace moesim::kernels {
namespace {

constexpr std::int64_t kSoftmaxKeys = 4096;  // the runner's rows at sequence length 4096
constexpr float kEpsilon = 1e-6f;

template <typename T>
std::vector<T> copy_back(const void* device, std::size_t offset, std::size_t count) {
  std::vector<T> host(count);
  CUDA_CHECK(cudaMemcpy(host.data(), static_cast<const T*>(device) + offset, count * sizeof(T),
                        cudaMemcpyDeviceToHost));
  return host;
}

std::vector<float> to_float(const std::vector<bf16_t>& values) {
  std::vector<float> out(values.size());
  std::transform(values.begin(), values.end(), out.begin(), bf16_to_float);
  return out;
}

}  // namespace

const char* layer_kernel_name(LayerKernelKind kind) {
  switch (kind) {
    case LayerKernelKind::ADD:
      return "add";
    case LayerKernelKind::SOFTMAX:
      return "softmax";
    case LayerKernelKind::RMSNORM:
      return "rmsnorm";
    case LayerKernelKind::TOPK:
      return "topk";
  }
  return "?";
}

std::int64_t LayerKernelCase::rows() const {
  const auto b = static_cast<std::int64_t>(bytes);
  switch (kind) {
    case LayerKernelKind::ADD:
      return b / 2;
    case LayerKernelKind::SOFTMAX:
      return b / 4 / kSoftmaxKeys;
    case LayerKernelKind::RMSNORM:
      return b / 2 / width;
    case LayerKernelKind::TOPK:
      return b / 2 / experts;
  }
  return 0;
}

std::size_t LayerKernelCase::input_bytes() const {
  switch (kind) {
    case LayerKernelKind::ADD:
      return 2 * bytes;
    case LayerKernelKind::SOFTMAX:
      return bytes;
    case LayerKernelKind::RMSNORM:
      return static_cast<std::size_t>(1 + extra_inputs) * bytes + static_cast<std::size_t>(width) * 2;
    case LayerKernelKind::TOPK:
      return bytes + static_cast<std::size_t>(experts) * sizeof(int);  // logits, then the counts
  }
  return 0;
}

std::size_t LayerKernelCase::output_bytes() const {
  switch (kind) {
    case LayerKernelKind::ADD:
    case LayerKernelKind::RMSNORM:
      return bytes;
    case LayerKernelKind::SOFTMAX:
      return bytes / 2;
    case LayerKernelKind::TOPK:
      return static_cast<std::size_t>(rows() * top_k) * (sizeof(int) + sizeof(float));
  }
  return 0;
}

double LayerKernelCase::hbm_bytes() const {
  const auto b = static_cast<double>(bytes);
  switch (kind) {
    case LayerKernelKind::ADD:
      return 3 * b;  // read a and b, write y
    case LayerKernelKind::SOFTMAX:
      return b / 2 + b / 2;  // causal: each row reads half its fp32 keys on average; writes bf16
    case LayerKernelKind::RMSNORM:
      return (2 + extra_inputs) * b;
    case LayerKernelKind::TOPK:
      return b + static_cast<double>(output_bytes());
  }
  return 0;
}

std::string LayerKernelCase::text() const {
  switch (kind) {
    case LayerKernelKind::RMSNORM:
      return "rmsnorm " + std::to_string(rows()) + "x" + std::to_string(width) + " +" +
             std::to_string(extra_inputs) + " inputs";
    case LayerKernelKind::TOPK:
      return "topk " + std::to_string(rows()) + " tokens " + std::to_string(experts) + " experts k " +
             std::to_string(top_k);
    default:
      return std::string(layer_kernel_name(kind)) + " " + std::to_string(bytes >> 20) + " MiB";
  }
}

void LayerKernelCase::fill(DeviceBuffer& input, DeviceBuffer& output, std::uint64_t seed,
                           cudaStream_t stream) const {
  const bool fp32 = kind == LayerKernelKind::SOFTMAX;
  const std::size_t values = (kind == LayerKernelKind::TOPK ? bytes : input_bytes()) / (fp32 ? 4 : 2);
  fill_random(input.get(), fp32 ? DataType::FP32 : DataType::BF16, values, seed, fp32 ? 4.0f : 1.0f, stream);
  if (kind == LayerKernelKind::TOPK)
    CUDA_CHECK(cudaMemsetAsync(input.as<char>() + bytes, 0, static_cast<std::size_t>(experts) * sizeof(int),
                               stream));
  CUDA_CHECK(cudaMemsetAsync(output.get(), 0, output_bytes(), stream));
}

void LayerKernelCase::launch(DeviceBuffer& input, DeviceBuffer& output, cudaStream_t stream) const {
  const auto* in = input.as<bf16_t>();
  switch (kind) {
    case LayerKernelKind::ADD: {
      const auto count = static_cast<std::size_t>(rows());
      launch_add(in, in + count, output.as<bf16_t>(), count, 1.0f, stream);
      return;
    }
    case LayerKernelKind::SOFTMAX:
      launch_causal_softmax(input.as<float>(), output.as<bf16_t>(), rows(), kSoftmaxKeys, stream);
      return;
    case LayerKernelKind::RMSNORM: {
      const std::size_t operand = bytes / 2;
      const bf16_t* extra1 = extra_inputs >= 1 ? in + operand : nullptr;
      const bf16_t* extra2 = extra_inputs >= 2 ? in + 2 * operand : nullptr;
      const bf16_t* gamma = in + static_cast<std::size_t>(1 + extra_inputs) * operand;
      launch_rmsnorm(in, extra1, extra2, gamma, output.as<bf16_t>(), rows(), width, kEpsilon, stream);
      return;
    }
    case LayerKernelKind::TOPK: {
      auto* counts = reinterpret_cast<int*>(input.as<char>() + bytes);
      auto* index = output.as<int>();
      auto* weight = reinterpret_cast<float*>(index + rows() * top_k);
      launch_gate_topk(in, index, weight, counts, rows(), experts, top_k, stream);
      return;
    }
  }
}

ErrorTally LayerKernelCase::check(const DeviceBuffer& input, const DeviceBuffer& output,
                                  cudaStream_t stream) const {
  CUDA_CHECK(cudaStreamSynchronize(stream));
  ErrorTally tally(1e-2);
  const std::int64_t n = rows();
  std::vector<std::int64_t> sampled;
  // Row kSoftmaxKeys - 1 is the softmax's longest causal row (every key unmasked).
  for (std::int64_t row : {std::int64_t{0}, std::int64_t{1}, kSoftmaxKeys - 1, n / 2 + 17, n - 1})
    if (row >= 0 && row < n) sampled.push_back(row);
  switch (kind) {
    case LayerKernelKind::ADD: {
      const std::size_t count = bytes / 2, window = 4096, at = count / 2;
      const auto a = to_float(copy_back<bf16_t>(input.get(), at, window));
      const auto b = to_float(copy_back<bf16_t>(input.get(), count + at, window));
      const auto y = to_float(copy_back<bf16_t>(output.get(), at, window));
      for (std::size_t i = 0; i < window; ++i) tally.add(y[i], a[i] + b[i], 1.0);
      return tally;
    }
    case LayerKernelKind::SOFTMAX:
      for (std::int64_t row : sampled) {
        const auto offset = static_cast<std::size_t>(row * kSoftmaxKeys);
        const auto scores = copy_back<float>(input.get(), offset, kSoftmaxKeys);
        const auto probabilities = to_float(copy_back<bf16_t>(output.get(), offset, kSoftmaxKeys));
        const auto last = static_cast<std::size_t>(row % kSoftmaxKeys);
        const float top =
            *std::max_element(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(last) + 1);
        double sum = 0;
        for (std::size_t j = 0; j <= last; ++j) sum += std::exp(static_cast<double>(scores[j] - top));
        // Errors relative to the row's largest probability: bf16 keeps about 3 significant digits.
        for (std::size_t j = 0; j < static_cast<std::size_t>(kSoftmaxKeys); ++j) {
          const double expected = j <= last ? std::exp(static_cast<double>(scores[j] - top)) / sum : 0.0;
          tally.add(probabilities[j], expected, 1.0 / sum);
        }
      }
      return tally;
    case LayerKernelKind::RMSNORM: {
      const auto w = static_cast<std::size_t>(width), operand = bytes / 2;
      const auto gamma = to_float(copy_back<bf16_t>(input.get(), (1 + extra_inputs) * operand, w));
      for (std::int64_t row : sampled) {
        std::vector<float> x = to_float(copy_back<bf16_t>(input.get(), static_cast<std::size_t>(row) * w, w));
        for (int e = 1; e <= extra_inputs; ++e) {
          const auto add =
              to_float(copy_back<bf16_t>(input.get(), e * operand + static_cast<std::size_t>(row) * w, w));
          for (std::size_t i = 0; i < w; ++i) x[i] += add[i];
        }
        // The kernel keeps the summed input in bf16 before it normalizes.
        if (extra_inputs > 0)
          for (float& v : x) v = bf16_to_float(float_to_bf16(v));
        const double squares = std::inner_product(x.begin(), x.end(), x.begin(), 0.0);
        const double scale = 1.0 / std::sqrt(squares / static_cast<double>(w) + kEpsilon);
        const auto y = to_float(copy_back<bf16_t>(output.get(), static_cast<std::size_t>(row) * w, w));
        for (std::size_t i = 0; i < w; ++i) tally.add(y[i], x[i] * scale * gamma[i], 1.0);
      }
      return tally;
    }
    case LayerKernelKind::TOPK: {
      const auto e = static_cast<std::size_t>(experts), k = static_cast<std::size_t>(top_k);
      for (std::int64_t token : sampled) {
        const auto logits = to_float(copy_back<bf16_t>(input.get(), static_cast<std::size_t>(token) * e, e));
        std::vector<int> order(e);
        std::iota(order.begin(), order.end(), 0);
        // Larger logit first, the lower expert on ties, as the kernel picks.
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
        double chosen = 0;
        for (std::size_t j = 0; j < k; ++j)
          chosen += std::exp(static_cast<double>(logits[order[j]] - logits[order[0]]));
        const auto index = copy_back<int>(output.get(), static_cast<std::size_t>(token) * k, k);
        const auto weight =
            copy_back<float>(output.as<int>() + n * top_k, static_cast<std::size_t>(token) * k, k);
        for (std::size_t j = 0; j < k; ++j) {
          tally.add(index[j], order[j], 1.0);
          tally.add(weight[j], std::exp(static_cast<double>(logits[order[j]] - logits[order[0]])) / chosen,
                    1.0);
        }
      }
      return tally;
    }
  }
  return tally;
}

}  // namespace moesim::kernels
