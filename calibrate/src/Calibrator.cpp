#include "moesim/calibrate/Calibrator.hpp"

// calibrate(): the fits in order (one file each: GemmFit.cpp, AttentionFit.cpp, ...), and the residual
// report.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "CalibrationContext.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate {

using namespace detail;

namespace {

// A log or trace that contributes nothing is an input mistake (a CPU-only trace, a log of failed runs), not a
// calibration that silently returns the base.
void check_each_input_measures(const CalibrationInputs& inputs) {
  for (const NcclTestsLog& log : inputs.nccl_tests) {
    if (log.cases().empty())
      throw ConfigError(log.file, "", "has no row with a size and a time > 0: nothing to calibrate from it");
  }
  for (const KinetoTrace& trace : inputs.traces) {
    if (trace.kernels.empty()) {
      throw ConfigError(
          trace.file, "/traceEvents",
          "holds no GPU kernel (an event with ph X and cat kernel): profile with CUDA activities");
    }
  }
}

}  // namespace

CalibrationResult calibrate(const hw::HwProfile& base, const CalibrationInputs& inputs) {
  const BenchResults& b = inputs.bench;
  if (b.gemm.empty() && b.grouped_gemm.empty() && b.tile_gemm.empty() && b.attention.empty() &&
      b.memory.empty() && b.collectives.empty() && b.contention.empty() && b.launch.empty() &&
      b.power.empty() && b.window_attention.empty() && inputs.nccl_tests.empty() && inputs.traces.empty()) {
    throw ConfigError("calibrate", "",
                      "nothing to calibrate: the inputs hold no benchmark results, logs or traces");
  }
  check_each_input_measures(inputs);
  CalibrationResult out;
  out.profile = base;
  out.profile.source_file.clear();
  // A copy whose GEMM and attention times scale_to_max_clock() may turn into maximum-clock times.
  CalibrationInputs clocked = inputs;
  Context c{base, clocked, out, {}, {}, {}};
  if (base.provenance.kind == hw::ProvenanceKind::CALIBRATED) {
    out.notes.push_back("the base profile '" + base.name + "' is itself calibrated" +
                        (base.source_file.empty() ? "" : " (" + base.source_file + ")") +
                        ": pass the published file (hwprofiles/profiles/" + base.name +
                        ".json) to start afresh");
  }
  check_same_gpu(c);
  set_provenance(c);
  fit_power_section(c);
  scale_to_max_clock(c, clocked.bench);
  fit_gemm(c);
  fit_grouped_gemm(c);
  fit_tile_gemm(c);
  fit_attention(c);
  fit_attention_rows(c);
  fit_memory(c);
  fit_collectives(c);
  fit_contention(c);
  fit_router_topk(c);
  fit_memory_kernels(c);
  fit_launch(c);
  fit_atomic_add(c);
  fit_blas_call(c);
  use_traces(c);
  for (const std::string& ignored : b.ignored) out.notes.push_back(ignored + ": not used (no profile field)");

  hw::Provenance& prov = out.profile.provenance;
  std::vector<std::string> sources = c.tags.lines();
  sources.push_back(
      "[C0] moesim calibrate: fit rules in calibrate/include/moesim/calibrate/Calibrator.hpp; "
      "parts not measured keep the base profile '" +
      base.name + "' and its sources below");
  for (const std::string& s : base.provenance.sources) sources.push_back(s);
  prov.sources = sources;
  std::string parts;
  for (const std::string& s : c.calibrated_parts) parts += (parts.empty() ? "" : ", ") + s;
  out.profile.description = base.description + " Calibrated on " + prov.device + " (" + prov.date +
                            "): " + parts + "; everything else as in the base profile.";
  out.profile.source_file = "<calibrated " + base.name + ">";
  hw::validate(out.profile);
  out.profile.source_file.clear();
  return out;
}

std::string format_residuals(const CalibrationResult& result) {
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "# %-26s %6s %9s %9s  %s\n", "table", "points", "max_err", "mean_err",
                "compared");
  o << line;
  std::snprintf(line, sizeof line, "# %-26s %6s %9s %9s  %s\n", "", "", "(%)", "(%)", "");
  o << line;
  double worst = 0;
  for (const Residual& r : result.residuals) {
    std::snprintf(line, sizeof line, "# %-26s %6d %9.2f %9.2f  %s\n", r.table.c_str(), r.points,
                  r.max_rel * 100, r.mean_rel * 100, r.note.c_str());
    o << line;
    worst = std::max(worst, r.max_rel);
  }
  std::snprintf(line, sizeof line, "# %zu tables fitted, largest residual %.2f%%\n", result.residuals.size(),
                worst * 100);
  o << line;
  for (const std::string& note : result.notes) o << "# note: " << note << "\n";
  return o.str();
}

}  // namespace moesim::calibrate
