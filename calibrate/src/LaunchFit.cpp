// Launch costs (eager, copy, graph, empty kernel) and the host cost of a BLAS call.
#include <algorithm>
#include <cctype>
#include <map>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"
#include "moesim/common/Statistics.hpp"

namespace moesim::calibrate::detail {
namespace {

// The engine adds kernel_min to every kernel on top of table times that were mostly measured as graph
// replays; launch_bench's layer-kernel sequences measure that excess directly (eager minus graph device time
// per kernel), so the source says how well the assumption holds.
std::string eager_excess_text(const std::map<std::string, std::vector<double>>& by_measure) {
  std::string text;
  for (const auto& [measure, eager] : by_measure) {
    if (measure.rfind("eager_device_", 0) != 0) continue;
    const std::string sequence = measure.substr(13);
    auto graph = by_measure.find("graph_device_" + sequence);
    if (graph == by_measure.end()) continue;
    text +=
        (text.empty() ? "" : ", ") + sequence + " " + num((median(eager) - median(graph->second)) * 1e6, 3);
  }
  if (text.empty()) return "";
  return " Eager minus graph device time per kernel of layer kernels (launch_bench, us): " + text +
         "; the engine adds kernel_min_us to each kernel for it.";
}

}  // namespace

void fit_launch(Context& c) {
  hw::GpuSpec& g = c.out.profile.gpu;
  std::map<std::string, std::vector<double>> by_measure;
  int largest_graph = 0;
  for (const LaunchCase& l : c.in.bench.launch) {
    by_measure[l.measure].push_back(l.time_s);
    const std::string suffix = l.measure.rfind("graph_device_", 0) == 0 ? l.measure.substr(13) : "";
    if (!suffix.empty() && suffix.size() < 9 && std::all_of(suffix.begin(), suffix.end(), ::isdigit))
      largest_graph = std::max(largest_graph, std::stoi(suffix));
  }
  if (by_measure.empty()) return;
  ErrorSummary e;
  std::string text;
  auto take = [&](const std::string& measure, double& field, const std::string& what) {
    auto it = by_measure.find(measure);
    if (it == by_measure.end()) return;
    field = round_significant(median(it->second), 3);
    for (double v : it->second) e.add(field, v);
    text += (text.empty() ? "" : "; ") + what + " " + num(field * 1e6, 3) + " us (" + measure + ")";
  };
  take("launch_host", g.launch_overhead_s, "launch_overhead_us = host time per eager launch");
  take("copy_launch_host", g.copy_launch_overhead_s,
       "copy_launch_overhead_us = host time per copy of a copy-engine collective");
  take("graph_host_1", g.graph_launch_overhead_s, "graph_launch_overhead_us = host time of one graph launch");
  if (largest_graph > 0)
    take("graph_device_" + std::to_string(largest_graph), g.graph_node_overhead_s,
         "graph_node_overhead_us = device time per empty-kernel node");
  take("launch_device", g.kernel_min_s,
       "kernel_min_us = device time of an empty kernel launched back to back");
  if (text.empty()) return;
  g.source += " Launch costs calibrated " + files_tags(c, "launch") +
              " with launch_bench (median of the runs' p50): " + text + "." + eager_excess_text(by_measure);
  add_residual(c, "launch", e, "each run's p50 vs the median kept");
  c.calibrated_parts.push_back("launch costs");
}

// A model that runs one GEMM per expert is bound by the host cost of each library call, which is about
// twice an empty kernel's launch (cuBLASLt's argument checks and algorithm setup). In a layer each call reads
// other operands than the one before; launch_bench's eager_host_gemm issues calls that way (an expert GEMM
// with its own weights per call, the GPU held so that the queue never blocks) and matches what the layer
// runner's expert loop costs the host. gemm_bench repeats one GEMM on the same operands, which costs the host
// 20-30% less (H200: 7.28 against 8.96-9.79 us); it is the fallback.
void fit_blas_call(Context& c) {
  std::vector<double> repeated;
  for (const GemmCase& g : c.in.bench.gemm) {
    if (g.host_s > 0) repeated.push_back(g.host_s);
  }
  std::vector<double> in_layer;
  for (const LaunchCase& l : c.in.bench.launch) {
    if (l.measure == "eager_host_gemm") in_layer.push_back(l.time_s);
  }
  if (repeated.empty() && in_layer.empty()) return;
  hw::GpuSpec& gpu = c.out.profile.gpu;
  const std::vector<double>& host = in_layer.empty() ? repeated : in_layer;
  gpu.blas_call_overhead_s = round_significant(median(host), 3);
  ErrorSummary e;
  for (double v : host) e.add(gpu.blas_call_overhead_s, v);
  const std::string gemm_bench = "the median host time of one cuBLASLt call over the " +
                                 std::to_string(repeated.size()) + " gemm_bench shapes " +
                                 files_tags(c, "gemm") +
                                 " (20 back-to-back enqueues of one GEMM on the same operands, median of 5)";
  if (in_layer.empty()) {
    gpu.source +=
        " blas_call_overhead_us = " + num(gpu.blas_call_overhead_s * 1e6, 3) + " us, " + gemm_bench + ".";
    add_residual(c, "blas call (host)", e, "each shape's host time per call vs the median kept");
  } else {
    gpu.source +=
        " blas_call_overhead_us = " + num(gpu.blas_call_overhead_s * 1e6, 3) + " us, the median over " +
        std::to_string(in_layer.size()) +
        " launch_bench runs of eager_host_gemm (host time per cuBLASLt call when each call has its own"
        " weights, as a layer's GEMMs do)";
    if (!repeated.empty())
      gpu.source += "; " + gemm_bench + ": " + num(round_significant(median(repeated), 3) * 1e6, 3) + " us";
    gpu.source += ".";
    add_residual(c, "blas call (host)", e, "each launch_bench run's eager_host_gemm vs the median kept");
  }
  c.calibrated_parts.push_back("BLAS call cost");
}

}  // namespace moesim::calibrate::detail
