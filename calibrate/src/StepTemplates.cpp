#include "StepTemplates.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "moesim/cost/CostModel.hpp"
#include "moesim/cost/ImplementationQuantities.hpp"

namespace moesim::calibrate::detail {
namespace {

using cost::ImplRows;
using cost::ImplWidth;
using models::LayerOp;

// The widths each op works on, most likely first: where two quantities share a value at the traced
// configuration (Qwen3's hidden 2048 is also half its query width), the op's own quantity wins.
std::vector<ImplWidth> preferred_widths(LayerOp op) {
  switch (op) {
    case LayerOp::ATTN_QKV:
    case LayerOp::ATTN_CORE:
    case LayerOp::ATTN_OUT:
      // The rotary widths after the heads' own: equal to them but for MLA, whose RoPE runs on a part of each
      // query head and on one key shared by all heads.
      return {ImplWidth::Q_WIDTH, ImplWidth::KV_WIDTH, ImplWidth::V_WIDTH, ImplWidth::Q_ROPE,
              ImplWidth::K_ROPE,  ImplWidth::HEADS,    ImplWidth::HIDDEN,  ImplWidth::ONE};
    case LayerOp::GATE:
      return {ImplWidth::EXPERTS, ImplWidth::TOP_K, ImplWidth::HIDDEN, ImplWidth::ONE};
    case LayerOp::ROUTED_EXPERTS:
      return {ImplWidth::HIDDEN, ImplWidth::EXPERT_FFN, ImplWidth::ONE,           ImplWidth::LOCAL_EXPERTS,
              ImplWidth::TOP_K,  ImplWidth::EXPERTS,    ImplWidth::EXPERT_WEIGHTS};
    case LayerOp::SHARED_EXPERTS:
      return {ImplWidth::HIDDEN, ImplWidth::SHARED_FFN, ImplWidth::ONE};
    case LayerOp::DENSE_FFN:
      return {ImplWidth::HIDDEN, ImplWidth::DENSE_FFN, ImplWidth::ONE};
    default:
      return {ImplWidth::HIDDEN, ImplWidth::ONE, ImplWidth::TOP_K, ImplWidth::EXPERTS,
              ImplWidth::LOCAL_EXPERTS};
  }
}

}  // namespace

double element_count(const std::vector<std::int64_t>& dims) {
  if (dims.empty()) return 0;
  double elements = 1;
  for (std::int64_t d : dims) elements *= static_cast<double>(d);
  return elements;
}

std::vector<std::int64_t> largest_input(const std::vector<std::vector<std::int64_t>>& inputs) {
  const std::vector<std::int64_t>* largest = nullptr;
  for (const auto& shape : inputs)
    if (!shape.empty() && (!largest || element_count(shape) > element_count(*largest))) largest = &shape;
  return largest ? *largest : std::vector<std::int64_t>{};
}

double traffic_elements(const TracedQuantities& q, ImplRows rows, ImplWidth width) {
  // The simulator's own quantities (cost::implementation_rows/width), so that a learned step scales at
  // simulation as it did at the traced configuration.
  return cost::implementation_rows(q.context, rows, q.expert_rows) *
         cost::implementation_width(*q.model, q.context, width);
}

namespace {
// Whether `rows` rows are the product of a run of adjacent dims (a batch-first or a heads-first layout).
bool rows_in_dims(double rows, const std::vector<std::int64_t>& dims) {
  for (std::size_t first = 0; first < dims.size(); ++first) {
    double product = 1;
    for (std::size_t last = first; last < dims.size(); ++last) {
      product *= static_cast<double>(dims[last]);
      if (std::abs(product - rows) < 0.5) return true;
    }
  }
  return false;
}

// A tensor shaped as one routed expert's weight, [hidden, k · expert_ffn] or [k · expert_ffn, hidden] (k = 2:
// gate and up fused), in a kernel that runs once per local expert: the gradient slice of a stacked weight an
// implementation indexes per expert. Checked before the activations' shapes, which it matches where tokens =
// hidden (Qwen3 at 2,048 tokens): inside a loop over experts an activation has the expert's rows, not all
// tokens, so tokens x expert_ffn read there had doubled the copy at Mixtral's 8,192 tokens and hidden 4,096.
bool expert_weight_dims(LayerOp op, const TracedQuantities& q, std::vector<std::int64_t> dims) {
  if (op != LayerOp::ROUTED_EXPERTS || !q.per_expert) return false;
  std::erase(dims, 1);
  if (dims.size() != 2) return false;
  const std::int64_t hidden = q.model->hidden, ffn = q.model->moe.expert_ffn;
  for (std::int64_t k : {1, 2}) {
    if ((dims[0] == hidden && dims[1] == k * ffn) || (dims[0] == k * ffn && dims[1] == hidden)) return true;
  }
  return false;
}
}  // namespace

std::optional<TrafficShape> traffic_shape(LayerOp op, const TracedQuantities& q,
                                          const std::vector<std::int64_t>& dims) {
  const double elements = element_count(dims);
  if (elements <= 0) return std::nullopt;
  if (expert_weight_dims(op, q, dims))
    return TrafficShape{ImplRows::NONE, ImplWidth::EXPERT_WEIGHT,
                        traffic_elements(q, ImplRows::NONE, ImplWidth::EXPERT_WEIGHT)};
  std::vector<ImplRows> rows = {ImplRows::TOKENS, ImplRows::ROUTED_ROWS, ImplRows::RECEIVED_ROWS,
                                ImplRows::NONE};
  if (q.per_expert) rows.insert(rows.begin(), ImplRows::EXPERT_ROWS);
  const std::vector<ImplWidth> widths = preferred_widths(op);
  for (bool rows_from_dims : {true, false}) {
    for (double factor : {1.0, 2.0, 0.5, 3.0, 4.0}) {
      for (ImplRows r : rows) {
        const double row_count = cost::implementation_rows(q.context, r, q.expert_rows);
        if (rows_from_dims && r != ImplRows::NONE && !rows_in_dims(row_count, dims)) continue;
        for (ImplWidth w : widths) {
          const double product = traffic_elements(q, r, w);
          if (product > 0 && std::abs(product * factor - elements) < 0.5) return TrafficShape{r, w, product};
        }
      }
    }
  }
  return std::nullopt;
}

std::optional<double> tensor_bytes(const std::vector<std::int64_t>& dims, const std::string& type) {
  static const std::map<std::string, double> sizes = {
      {"c10::BFloat16", 2}, {"c10::Half", 2}, {"float", 4},         {"double", 8},      {"long int", 8},
      {"int", 4},           {"bool", 1},      {"unsigned char", 1}, {"signed char", 1}, {"short int", 2}};
  const auto size = sizes.find(type);
  if (size == sizes.end()) return std::nullopt;
  double elements = 1;
  for (std::int64_t d : dims) elements *= static_cast<double>(d);
  return elements * size->second;
}

std::optional<double> operand_bytes(const std::vector<std::vector<std::int64_t>>& inputs,
                                    const std::vector<std::string>& types) {
  double total = 0, largest = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) continue;  // a scalar, a list or no tensor: nothing streamed
    const auto bytes = tensor_bytes(inputs[i], i < types.size() ? types[i] : "");
    if (!bytes) return std::nullopt;
    total += *bytes;
    largest = std::max(largest, *bytes);
  }
  if (largest <= 0) return std::nullopt;
  return total + largest;
}

double bytes_for_duration(const hw::HwProfile& hw, double duration_s) {
  const double variable = duration_s - hw.gpu.kernel_min_s;
  if (variable <= 0) return 0;
  auto time_of = [&](double bytes) { return bytes / (hw.gpu.hbm_bw_Bps * hw.memory_efficiency(bytes)); };
  // Bisection on log(bytes): the time grows with the bytes across the memory curve's sizes.
  double low = 1, high = 1e15;
  for (int i = 0; i < 200 && high / low > 1 + 1e-9; ++i) {
    const double mid = std::sqrt(low * high);
    (time_of(mid) < variable ? low : high) = mid;
  }
  return std::sqrt(low * high);
}

std::vector<PredictedKernel> predicted_kernels(const hw::HwProfile& hw, LayerOp op, bool backward,
                                               const TracedQuantities& q, bool gemms) {
  const std::vector<models::KernelCost> all = cost::implementation_moesim_kernels(
      *q.model, op, backward ? models::Pass::DGRAD : models::Pass::FORWARD, q.context,
      q.per_expert ? std::optional<std::int64_t>(q.expert_rows) : std::nullopt);
  std::vector<PredictedKernel> out;
  for (const models::KernelCost& k : all) {
    const bool gemm = k.kind == models::KernelClass::GEMM || k.kind == models::KernelClass::GROUPED_GEMM;
    if (gemm != gemms || (!gemms && k.kind != models::KernelClass::ATTENTION)) continue;
    const sim::KernelWork w = cost::kernel_work(hw, k, q.context.dtype);
    out.push_back({k, std::max(w.compute_ns, w.memory_ns), w.fixed_ns});
  }
  return out;
}

bool is_reduction(const std::string& op) {
  static const std::set<std::string> reductions = {
      "aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::max",
      "aten::min", "aten::norm", "aten::var",  "aten::std",  "aten::linalg_vector_norm"};
  return reductions.count(op) > 0;
}

}  // namespace moesim::calibrate::detail
