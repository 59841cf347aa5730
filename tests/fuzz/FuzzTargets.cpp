#include "FuzzTargets.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <numeric>

#include "moesim/calibrate/BenchResults.hpp"
#include "moesim/calibrate/Calibrator.hpp"
#include "moesim/calibrate/KinetoTrace.hpp"
#include "moesim/calibrate/NcclTestsLog.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/hwprofiles/Cluster.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/models/Routing.hpp"
#include "moesim/schedules/Simulation.hpp"
#include "moesim/sweep/ResultLog.hpp"
#include "moesim/sweep/SweepSpec.hpp"
#include "moesim/traces/OpAttribution.hpp"
#include "moesim/validate/Measured.hpp"

namespace moesim::fuzz {
namespace {

const char* const kLabel = "fuzz-input";

/** Loaders that take a path get the text through a file of their own, removed when the load is done. */
class TempInput {
 public:
  TempInput(const std::string& text, const std::string& suffix)
      : path_("/tmp/moesim-fuzz-" + std::to_string(::getpid()) + suffix) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
  }
  TempInput(const TempInput&) = delete;
  TempInput& operator=(const TempInput&) = delete;
  ~TempInput() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const hw::HwProfile& base_profile() {
  static const hw::HwProfile profile = hw::load_profile("h100");
  return profile;
}

void calibrate_from(calibrate::CalibrationInputs inputs) {
  calibrate::calibrate(base_profile(), inputs);
}

void load_model(const std::string& text) {
  models::model_from_json(parse_json_text(text, kLabel), kLabel);
}

/** A profile the validator accepts must be one the engine can run: one small MoE layer on it. */
void load_hwprofile(const std::string& text) {
  const hw::HwProfile profile = hw::profile_from_json(parse_json_text(text, kLabel), kLabel);
  static const models::ModelSpec model = models::load_model("gpt-moe-s");
  schedules::Scenario s;
  s.model = model;
  s.hw = profile;
  s.parallel.ep = profile.node.gpus_per_node >= 2 ? 2 : 1;
  s.workload.phase = schedules::Phase::TRAIN;
  s.workload.tokens = 512;
  s.workload.seq_len = 512;
  s.workload.layers = 2;
  schedules::simulate(s);
}

void load_sweep_spec(const std::string& text) {
  sweep::expand(sweep::parse_sweep(text, kLabel));
}

void load_sweep_results(const std::string& text, const std::string& suffix) {
  const TempInput file(text, suffix);
  const sweep::ResultLog log(file.path(), {"ep", "schedule"}, {"step_ms", "layer_ms"}, true);
  log.read_all();
}
void load_sweep_results_csv(const std::string& text) {
  load_sweep_results(text, ".csv");
}
void load_sweep_results_jsonl(const std::string& text) {
  load_sweep_results(text, ".jsonl");
}

void load_nccl_tests(const std::string& text) {
  calibrate::CalibrationInputs inputs;
  inputs.nccl_tests.push_back(calibrate::parse_nccl_tests_log(text, "all_reduce_perf.log"));
  calibrate_from(inputs);
}

void load_kineto_trace(const std::string& text) {
  calibrate::CalibrationInputs inputs;
  inputs.traces.push_back(calibrate::parse_kineto_trace(text, kLabel));
  calibrate_from(inputs);
}

/** A PyTorch stack's trace, every launch attributed to an op: by moesim's ranges, or by its module calls. */
void load_torch_trace(const std::string& text) {
  traces::attribute_step(traces::parse_torch_trace(text, kLabel));
}

void load_bench_results(const std::string& text) {
  calibrate::CalibrationInputs inputs;
  calibrate::add_bench_document(text, kLabel, inputs.bench);
  calibrate_from(inputs);
}

void load_measured(const std::string& text) {
  const TempInput file(text, ".measured.json");
  validate::read_layer_runner_results(file.path());
}

/** Routing files are drawn from as the simulation would: every rank's tokens to top_k of the experts. */
void load_routing_histogram(const std::string& text) {
  const TempInput file(text, ".histogram.json");
  const models::RoutingSpec spec = models::parse_routing("histogram:" + file.path());
  const int experts = static_cast<int>(spec.histogram.size());
  if (experts > 4096) return;  // the model's expert count bounds a histogram; 4096 keeps an execution short
  models::route_tokens(spec, 1, 2, 64, experts, std::min(2, experts), 1.0);
}

void load_routing_recorded(const std::string& text) {
  const TempInput file(text, ".recorded.json");
  const models::RoutingSpec spec = models::parse_routing("recorded:" + file.path());
  const auto& first = spec.recorded.front();
  const std::int64_t slots = std::accumulate(first.begin(), first.end(), std::int64_t{0});
  const int experts = static_cast<int>(first.size());
  if (experts < 1 || experts > 4096 || spec.recorded.size() > 256 || slots > (1 << 20)) return;
  models::route_tokens(spec, 1, static_cast<int>(spec.recorded.size()), slots, experts, 1, 1.0);
}

void load_cluster(const std::string& text) {
  hw::parse_cluster(text, kLabel);
}

void load_implementation(const std::string& text) {
  cost::implementation_from_json(parse_json_text(text, kLabel), kLabel);
}

}  // namespace

const std::vector<FuzzTarget>& fuzz_targets() {
  static const std::vector<FuzzTarget> targets = {
      {"model", load_model},
      {"hwprofile", load_hwprofile},
      {"sweep_spec", load_sweep_spec},
      {"sweep_results_csv", load_sweep_results_csv},
      {"sweep_results_jsonl", load_sweep_results_jsonl},
      {"nccl_tests", load_nccl_tests},
      {"kineto_trace", load_kineto_trace},
      {"torch_trace", load_torch_trace},
      {"bench_results", load_bench_results},
      {"measured", load_measured},
      {"routing_histogram", load_routing_histogram},
      {"routing_recorded", load_routing_recorded},
      {"cluster", load_cluster},
      {"implementation", load_implementation},
  };
  return targets;
}

const FuzzTarget* find_fuzz_target(const std::string& name) {
  for (const FuzzTarget& target : fuzz_targets()) {
    if (name == target.name) return &target;
  }
  return nullptr;
}

bool run_fuzz_target(const FuzzTarget& target, const std::string& text) {
  try {
    target.load(text);
  } catch (const ConfigError&) {
  } catch (const ScheduleError&) {
  }
  return true;
}

}  // namespace moesim::fuzz
