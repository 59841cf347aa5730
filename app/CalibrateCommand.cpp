// `moesim calibrate`: fit a hardware profile from kernels/ results, nccl-tests logs and PyTorch traces.
#include <iostream>

#include "Commands.hpp"
#include "moesim/calibrate/BenchResults.hpp"
#include "moesim/calibrate/Calibrator.hpp"
#include "moesim/calibrate/KinetoTrace.hpp"
#include "moesim/calibrate/NcclTestsLog.hpp"
#include "moesim/calibrate/ProfileText.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"

namespace moesim::app {

namespace {
struct CalibrateOptions {
  std::vector<std::string> results;
  std::vector<std::string> nccl_logs;
  std::vector<std::string> traces;
  std::string base;
  std::string out;
};

int run_calibrate(const CalibrateOptions& o) {
  if (o.results.empty() && o.nccl_logs.empty() && o.traces.empty())
    throw ConfigError("moesim calibrate", "",
                      "nothing to fit: give --from RESULTS, --nccl-tests LOG or --torch-trace TRACE");
  const hw::HwProfile base = hw::load_profile(o.base);
  calibrate::CalibrationInputs inputs;
  inputs.bench = calibrate::load_bench_results(o.results);
  for (const std::string& log : o.nccl_logs) inputs.nccl_tests.push_back(calibrate::load_nccl_tests_log(log));
  for (const std::string& trace : o.traces) inputs.traces.push_back(calibrate::load_kineto_trace(trace));
  const calibrate::CalibrationResult result = calibrate::calibrate(base, inputs);
  std::cout << "# moesim calibrate: base " << base.name << " (" << hw::to_string(base.provenance.kind)
            << "), " << result.profile.provenance.device << ", " << result.profile.provenance.date << "\n";
  std::cout << calibrate::format_residuals(result);
  std::cout << "# wrote " << write_new_file(o.out, calibrate::profile_text(result.profile)) << "\n";
  return 0;
}
}  // namespace

void add_calibrate(CLI::App& app, Action& action) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* sub = app.add_subcommand("calibrate",
                                     "Fit a hardware profile from kernels/ results (moesim bench, *_bench "
                                     "-J), nccl-tests/rccl-tests logs and "
                                     "PyTorch profiler traces; what is not measured comes from --base. "
                                     "Prints fit residuals; the output file is "
                                     "never overwritten (FILE.1, FILE.2, ... instead)");
  sub->add_option("--from", o->results, "kernels/ results JSON files (moesim bench output or single suites)")
      ->check(CLI::ExistingFile);
  sub->add_option("--nccl-tests", o->nccl_logs,
                  "nccl-tests / rccl-tests stdout logs (all_reduce_perf, alltoall_perf, ...)")
      ->check(CLI::ExistingFile);
  sub->add_option("--torch-trace", o->traces, "PyTorch profiler (Kineto) Chrome trace JSON files")
      ->check(CLI::ExistingFile);
  sub->add_option(
         "--base", o->base,
         "Profile the calibration starts from, best as a file (hwprofiles/profiles/h200.json): the name h200 "
         "resolves to h200.calibrated.json once that exists")
      ->required();
  sub->add_option("--out", o->out,
                  "Calibrated profile to write, e.g. hwprofiles/profiles/h200.calibrated.json")
      ->required();
  sub->callback([o, &action] { action = [o] { return run_calibrate(*o); }; });
}

}  // namespace moesim::app
