// memory_bench: memory-bound MoE operators and their achieved HBM bandwidth.
//
//   copy       y = x                                   bytes = 2·T·H·2
//   permute    y[p] = x[src[p]], p < T·k (dispatch)    bytes = 2·T·k·H·2 + T·k·4
//   unpermute  y[t] = Σ_j w[t,j]·x[pos[t,j]] (combine) bytes = T·k·H·2 + T·H·2 + T·k·8
//   rmsnorm    y = x / rms(x) · g                      bytes = 2·T·H·2 + H·2
//   swiglu     y = silu(a)·b, [T, 2F] -> [T, F]        bytes = 3·T·F·2
//   add        y = x + r                               bytes = 3·T·H·2
// All bf16 with fp32 arithmetic; rows are moved with 16-byte accesses. Routing sends every
// token to k distinct random experts and orders the copies by expert, as MoE dispatch does.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "BenchRunner.hpp"
#include "DeviceBuffer.hpp"
#include "DeviceFill.hpp"
#include "DeviceInfo.hpp"
#include "LayerKernels.hpp"
#include "moesim/kernels/DatasheetPeaks.hpp"

namespace moesim::kernels {
namespace {

constexpr int kVector = 8;  // bf16 values per 16-byte access (LayerKernels.hpp moves rows the same way)
constexpr int kThreads = 256;

__global__ void copy_kernel(const uint4* x, uint4* y, std::size_t vectors) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += stride) {
    y[i] = x[i];
  }
}

enum class Op { COPY, PERMUTE, UNPERMUTE, RMSNORM, SWIGLU, ADD };
const char* op_name(Op op) {
  switch (op) {
    case Op::COPY:
      return "copy";
    case Op::PERMUTE:
      return "permute";
    case Op::UNPERMUTE:
      return "unpermute";
    case Op::RMSNORM:
      return "rmsnorm";
    case Op::SWIGLU:
      return "swiglu";
    case Op::ADD:
      return "add";
  }
  return "?";
}

struct MemoryCase {
  Op op;
  std::int64_t tokens;
  std::int64_t width;  // H (F for swiglu)
  std::int64_t top_k;
};

float host_input(std::uint64_t seed, std::size_t index) {
  return bf16_to_float(float_to_bf16(random_value(seed, index, 1.0f)));
}

class MemoryBench : public CaseBench {
 public:
  MemoryBench(const CommonOptions& common, int device, std::vector<std::int64_t> tokens, double peak_GBps)
      : common_(common), device_(device), peak_GBps_(peak_GBps) {
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (std::int64_t t : tokens) {
      for (auto [hidden, ffn, top_k] : {std::tuple<int, int, int>{2048, 1408, 6}, {7168, 2048, 8}}) {
        for (Op op : {Op::COPY, Op::PERMUTE, Op::UNPERMUTE, Op::RMSNORM, Op::ADD}) {
          cases_.push_back({op, t, hidden, top_k});
        }
        cases_.push_back({Op::SWIGLU, t * top_k, ffn, top_k});
      }
    }
  }
  ~MemoryBench() override { (void)cudaStreamDestroy(stream_); }

  std::vector<TextColumn> case_columns() const override {
    return {{"op", "", 9}, {"tokens", "", 7}, {"width", "", 6}, {"topk", "", 4}, {"size", "B", 11}};
  }
  std::vector<TextColumn> metric_columns() const override { return {{"bw", "GB/s", 8}, {"peak", "%", 6}}; }
  std::size_t case_count() const override { return cases_.size(); }

  CaseDescription describe(std::size_t index) const override {
    const MemoryCase& c = cases_[index];
    CaseDescription d;
    d.cells = {op_name(c.op), std::to_string(c.tokens), std::to_string(c.width), std::to_string(c.top_k),
               std::to_string(static_cast<long long>(bytes_and_flops(index).bytes))};
    d.params["op"] = op_name(c.op);
    d.params["tokens"] = static_cast<long long>(c.tokens);
    d.params["width"] = static_cast<long long>(c.width);
    d.params["top_k"] = static_cast<long long>(c.top_k);
    d.params["dtype"] = "bf16";
    return d;
  }

  void init(std::size_t index) override {
    const MemoryCase& c = cases_[index];
    const std::size_t rows_in = in_rows(c);
    const std::size_t rows_out = out_rows(c);
    const std::size_t in_width = c.op == Op::SWIGLU ? 2 * c.width : c.width;
    x_ = DeviceBuffer(device_, rows_in * in_width * 2);
    y_ = DeviceBuffer(device_, rows_out * c.width * 2);
    fill_random(x_.get(), DataType::BF16, rows_in * in_width, seed(index), 1.0f, stream_);
    fill_constant(y_.get(), DataType::BF16, rows_out * c.width, NAN, stream_);
    if (c.op == Op::ADD || c.op == Op::RMSNORM) {
      const std::size_t count = c.op == Op::ADD ? rows_in * c.width : c.width;
      r_ = DeviceBuffer(device_, count * 2);
      fill_random(r_.get(), DataType::BF16, count, seed(index) + 1, 1.0f, stream_);
    }
    if (c.op == Op::PERMUTE || c.op == Op::UNPERMUTE) build_routing(c, index);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void run(std::size_t index) override {
    const MemoryCase& c = cases_[index];
    const auto* x = x_.as<const bf16_t>();
    auto* y = y_.as<bf16_t>();
    const std::size_t count = static_cast<std::size_t>(c.tokens * c.width);
    switch (c.op) {
      case Op::COPY: {
        const std::size_t vectors = count / kVector;
        const unsigned grid =
            static_cast<unsigned>(std::min<std::size_t>((vectors + kThreads - 1) / kThreads, 65535 * 4));
        copy_kernel<<<grid, kThreads, 0, stream_>>>(x_.as<const uint4>(), y_.as<uint4>(), vectors);
        CUDA_CHECK_LAUNCH();
        break;
      }
      case Op::ADD:
        launch_add(x, r_.as<const bf16_t>(), y, count, 1.0f, stream_);
        break;
      case Op::SWIGLU:
        launch_swiglu(x, y, c.tokens, c.width, stream_);
        break;
      case Op::PERMUTE:
        launch_gather_rows(x, source_row_.as<const int>(), y, c.tokens * c.top_k, c.width, stream_);
        break;
      case Op::UNPERMUTE:
        launch_unpermute(x, position_.as<const int>(), weight_.as<const float>(), nullptr, y, c.tokens,
                         c.width, static_cast<int>(c.top_k), stream_);
        break;
      case Op::RMSNORM:
        launch_rmsnorm(x, nullptr, nullptr, r_.as<const bf16_t>(), y, c.tokens, c.width, 1e-6f, stream_);
        break;
    }
  }

  std::vector<DeviceStream> streams() const override { return {{device_, stream_}}; }
  bool is_graph_capturable() const override { return true; }

  WorkCount bytes_and_flops(std::size_t index) const override {
    const MemoryCase& c = cases_[index];
    const double row = static_cast<double>(c.width) * 2;
    const double t = static_cast<double>(c.tokens);
    const double tk = t * static_cast<double>(c.top_k);
    switch (c.op) {
      case Op::COPY:
        return {2 * t * row, 0};
      case Op::PERMUTE:
        return {2 * tk * row + tk * 4, 0};
      case Op::UNPERMUTE:
        return {tk * row + t * row + tk * 8, 2 * tk * static_cast<double>(c.width)};
      case Op::RMSNORM:
        return {2 * t * row + row, 4 * t * static_cast<double>(c.width)};
      case Op::SWIGLU:
        return {3 * t * row, 6 * t * static_cast<double>(c.width)};
      case Op::ADD:
        return {3 * t * row, t * static_cast<double>(c.width)};
    }
    return {};
  }

  std::vector<double> metrics(std::size_t, const WorkCount& work, double seconds) const override {
    const double bw = gigabytes_per_second(work.bytes, seconds);
    return {bw, peak_GBps_ > 0 ? bw / peak_GBps_ * 100 : 0.0};
  }

  ErrorTally verify(std::size_t index) override;

  void release(std::size_t) override {
    x_.reset();
    y_.reset();
    r_.reset();
    source_row_.reset();
    position_.reset();
    weight_.reset();
  }

 private:
  std::uint64_t seed(std::size_t index) const {
    return static_cast<std::uint64_t>(common_.seed) + 10 * index;
  }
  static std::size_t in_rows(const MemoryCase& c) {
    return static_cast<std::size_t>(c.op == Op::UNPERMUTE ? c.tokens * c.top_k : c.tokens);
  }
  static std::size_t out_rows(const MemoryCase& c) {
    return static_cast<std::size_t>(c.op == Op::PERMUTE ? c.tokens * c.top_k : c.tokens);
  }

  // Each token picks top_k distinct experts out of 64; copies are ordered by expert (stable).
  void build_routing(const MemoryCase& c, std::size_t index) {
    constexpr int kExperts = 64;
    std::mt19937_64 rng(seed(index));
    const auto total = static_cast<std::size_t>(c.tokens * c.top_k);
    std::vector<int> expert(total);
    std::vector<int> choices(kExperts);
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      std::iota(choices.begin(), choices.end(), 0);
      for (std::int64_t j = 0; j < c.top_k; ++j) {
        std::swap(choices[static_cast<std::size_t>(j)],
                  choices[static_cast<std::size_t>(j) + rng() % (kExperts - static_cast<std::size_t>(j))]);
        expert[static_cast<std::size_t>(t * c.top_k + j)] = choices[static_cast<std::size_t>(j)];
      }
    }
    std::vector<int> order(total);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return expert[a] < expert[b]; });
    host_source_row_.assign(total, 0);
    host_position_.assign(total, 0);
    host_weight_.assign(total, 0);
    for (std::size_t p = 0; p < total; ++p) {
      host_source_row_[p] = order[p] / static_cast<int>(c.top_k);
      host_position_[static_cast<std::size_t>(order[p])] = static_cast<int>(p);
    }
    for (std::size_t i = 0; i < total; ++i)
      host_weight_[i] = 0.5f + static_cast<float>(rng() % 1000) / 2000.0f;
    source_row_ = DeviceBuffer(device_, total * sizeof(int));
    position_ = DeviceBuffer(device_, total * sizeof(int));
    weight_ = DeviceBuffer(device_, total * sizeof(float));
    CUDA_CHECK(
        cudaMemcpy(source_row_.get(), host_source_row_.data(), total * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(
        cudaMemcpy(position_.get(), host_position_.data(), total * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(weight_.get(), host_weight_.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  }

  const CommonOptions& common_;
  int device_;
  double peak_GBps_;
  cudaStream_t stream_ = nullptr;
  std::vector<MemoryCase> cases_;
  DeviceBuffer x_, y_, r_, source_row_, position_, weight_;
  std::vector<int> host_source_row_, host_position_;
  std::vector<float> host_weight_;
};

// Checks 16 output rows (first, last, and spread between) against a host recomputation.
ErrorTally MemoryBench::verify(std::size_t index) {
  const MemoryCase& c = cases_[index];
  const std::size_t rows = out_rows(c);
  const auto width = static_cast<std::size_t>(c.width);
  const std::size_t in_width = c.op == Op::SWIGLU ? 2 * width : width;
  const std::uint64_t s = seed(index);
  ErrorTally tally(1e-2);
  std::vector<bf16_t> out(width);
  for (int sample = 0; sample < 16; ++sample) {
    const std::size_t row = sample == 15 ? rows - 1 : rows * static_cast<std::size_t>(sample) / 15;
    CUDA_CHECK(cudaMemcpy(out.data(), y_.as<bf16_t>() + row * width, width * 2, cudaMemcpyDeviceToHost));
    double squares = 0;
    if (c.op == Op::RMSNORM) {
      for (std::size_t i = 0; i < width; ++i) squares += std::pow(host_input(s, row * width + i), 2);
    }
    for (std::size_t i = 0; i < width; ++i) {
      double reference = 0;
      switch (c.op) {
        case Op::COPY:
          reference = host_input(s, row * width + i);
          break;
        case Op::ADD:
          reference = host_input(s, row * width + i) + host_input(s + 1, row * width + i);
          break;
        case Op::PERMUTE:
          reference = host_input(s, static_cast<std::size_t>(host_source_row_[row]) * width + i);
          break;
        case Op::UNPERMUTE:
          for (std::int64_t j = 0; j < c.top_k; ++j) {
            const std::size_t slot = row * static_cast<std::size_t>(c.top_k) + static_cast<std::size_t>(j);
            reference += host_weight_[slot] *
                         host_input(s, static_cast<std::size_t>(host_position_[slot]) * width + i);
          }
          break;
        case Op::RMSNORM:
          reference = host_input(s, row * width + i) /
                      std::sqrt(squares / static_cast<double>(width) + 1e-6) * host_input(s + 1, i);
          break;
        case Op::SWIGLU: {
          const double gate = host_input(s, row * in_width + i);
          reference = gate / (1 + std::exp(-gate)) * host_input(s, row * in_width + width + i);
          break;
        }
      }
      // bf16 output: rounding error up to 2^-9 of the value; values near 0 are judged against 1/8.
      tally.add(bf16_to_float(out[i]), reference, std::max(std::fabs(reference), 0.125));
    }
  }
  return tally;
}

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session("memory",
                       "memory-bound MoE operators (permute, unpermute, RMSNorm, SwiGLU, add): HBM GB/s");
  std::vector<std::int64_t> tokens{4096, 16384, 65536};
  session.parser().add_int_list("tokens", 0, &tokens, "token counts T");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    s.open({});
    const int device = s.devices().front();
    const auto peak = datasheet_peak(describe_gpu(device).name);
    const double peak_GBps = peak ? peak->hbm_GBps : 0.0;
    if (peak)
      s.log().comment("Peak: " + peak->part + " datasheet HBM " + format_fixed(peak_GBps, 0) + " GB/s");
    s.log().add_context("peak_hbm_GBps", peak_GBps);
    MemoryBench bench(s.options(), device, tokens, peak_GBps);
    run_cases(s, bench);
  });
}
