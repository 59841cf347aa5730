// `moesim calibrate`: fit a hardware profile from kernels/ results, nccl-tests logs and PyTorch traces.
#include <iostream>
#include <nlohmann/json.hpp>

#include "Commands.hpp"
#include "FlagChecks.hpp"
#include "moesim/calibrate/BenchResults.hpp"
#include "moesim/calibrate/Calibrator.hpp"
#include "moesim/calibrate/ImplementationLearner.hpp"
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
  std::string impl_out;
  std::string impl_name;
  std::string impl_base;
  calibrate::TracedRunConfig traced;
};

// --impl-out: an implementation profile learned from the traces, relative to the base hardware profile.
void learn_implementation(const CalibrateOptions& o, const hw::HwProfile& base) {
  if (o.traces.empty()) throw ConfigError("", "--impl-out", "needs --torch-trace TRACE (one or more)");
  std::vector<calibrate::TracedStack> stacks;
  for (const std::string& trace : o.traces) stacks.push_back(calibrate::load_traced_stack(trace, o.traced));
  const std::string name = o.impl_name.empty() ? "learned" : o.impl_name;
  const calibrate::LearnedImplementation learned =
      calibrate::learn_implementation(stacks, base, name, o.impl_base);
  std::cout << "# moesim calibrate: implementation '" << name << "' learned on " << base.name << "\n";
  for (const std::string& note : learned.notes) std::cout << "# " << note << "\n";
  std::cout << "# wrote "
            << write_new_file(o.impl_out, cost::implementation_to_json(learned.profile).dump(1) + "\n")
            << "\n";
}

int run_calibrate(const CalibrateOptions& o) {
  if (o.results.empty() && o.nccl_logs.empty() && o.traces.empty())
    throw ConfigError("moesim calibrate", "",
                      "nothing to fit: give --from RESULTS, --nccl-tests LOG or --torch-trace TRACE");
  if (o.out.empty() && o.impl_out.empty())
    throw ConfigError("moesim calibrate", "--out",
                      "is required (or --impl-out for an implementation profile)");
  const hw::HwProfile base = hw::load_profile(o.base);
  if (!o.impl_out.empty()) learn_implementation(o, base);
  if (o.out.empty()) return 0;
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
  sub->add_option(
         "--torch-trace", o->traces,
         "PyTorch profiler (Kineto) Chrome trace JSON files (.json or .json.gz): scale the GEMM table "
         "(--out), or learn an implementation profile (--impl-out)")
      ->check(CLI::ExistingFile);
  sub->add_option(
         "--base", o->base,
         "Profile the calibration starts from, best as a file (hwprofiles/profiles/h200.json): the name h200 "
         "resolves to h200.calibrated.json once that exists")
      ->required();
  sub->add_option("--out", o->out,
                  "Calibrated profile to write, e.g. hwprofiles/profiles/h200.calibrated.json");
  sub->add_option(
      "--impl-out", o->impl_out,
      "Implementation profile to learn from the --torch-trace traces (the user's own stack: kernels "
      "per op, their rates relative to --base, host launch costs and syncs) and write, for simulate "
      "--impl FILE; never overwritten");
  sub->add_option("--impl-name", o->impl_name,
                  "Name of the learned implementation profile (default learned)");
  sub->add_option(
      "--impl-base", o->impl_base,
      "Shipped profile for the ops the traces do not show (eager, grouped, fused; default eager when "
      "the routed experts loop over the experts, else grouped)");
  sub->add_option("--model", o->traced.model,
                  "With --impl-out, for traces without a run record beside them: the traced model");
  sub->add_option("--ep", o->traced.ep,
                  "... its EP degree (default 1 where the trace launched no collective)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--tokens", o->traced.tokens,
                  "... its tokens per rank (default: read from the trace's first attention)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--seq", o->traced.seq, "... its sequence length (default: likewise)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option(
         "--untraced-issue-ms", o->traced.issue_ms,
         "With --impl-out: the traced step's host issue time without the profiler (ms), to take the "
         "profiler's overhead out of the trace's host times (a run record beside the trace gives it)")
      ->check(finite_in(1e-6, 1e9));
  sub->add_option("--untraced-forward-ms", o->traced.forward_issue_ms,
                  "... and its forward's (ms): the overhead then comes out per pass (the trace needs a "
                  "moesim.forward range)")
      ->check(finite_in(1e-6, 1e9));
  sub->add_option(
         "--host-probe-us", o->traced.host_probe_us,
         "With --impl-out: the traced host's probe (python3 -m torch_stacks.host_probe, us per op; a "
         "run record beside the trace gives it): the profile's host.probe_us, for simulate "
         "--host-probe on other hosts")
      ->check(finite_in(1e-3, 1e6));
  sub->callback([o, &action] { action = [o] { return run_calibrate(*o); }; });
}

}  // namespace moesim::app
