#include "moesim/validate/Measured.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "moesim/common/JsonReader.hpp"
#include "moesim/common/Statistics.hpp"
#include "moesim/hwprofiles/ProfileEnums.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/models/Routing.hpp"
#include "moesim/schedules/Simulation.hpp"

namespace moesim::validate {

namespace {

/**
 * The layer runner's schedules (kernels/layer/Schedule.hpp) and the simulator scenario each one runs. The
 * runner's regular waits for every collective at once (no shared-expert overlap); its farskip-ce moves
 * the all-to-alls by copy engines. Speedups are against the runner's baseline schedule.
 */
struct RunnerSchedule {
  const char* runner;
  const char* schedule;
  std::vector<std::pair<const char*, const char*>> options;
  bool baseline;
};

const std::vector<RunnerSchedule>& runner_schedules() {
  static const std::vector<RunnerSchedule> table = {
      {"regular", "regular", {{"shared_overlap", "off"}}, true},
      {"farskip", "farskip", {}, false},
      {"farskip-ce", "farskip", {{"transport", "copy_engine"}}, false},
  };
  return table;
}

const RunnerSchedule* runner_schedule(const std::string& name) {
  for (const RunnerSchedule& r : runner_schedules())
    if (name == r.runner) return &r;
  return nullptr;
}

double p50(JsonObject& record, const std::string& key) {
  JsonObject stats = record.object(key);
  return stats.positive("p50");
}

int positive_int(JsonObject& o, const std::string& key) {
  const std::int64_t v = o.positive_integer(key);
  if (v > 1 << 20) o.fail(key, "is too large");
  return static_cast<int>(v);
}

// {"rank": R, "iterations": N, "steps": [{"step": "ATTN_CORE", "count": 4, "gpu_ms": ..., "host_ms": ...}]}
void read_op_profile(JsonObject full, MeasuredRun& r) {
  const std::int64_t rank = full.integer("rank");
  if (rank < 0 || rank >= r.gpus) full.fail("rank", "expected a rank in [0, gpus)");
  r.op_profile_rank = static_cast<int>(rank);
  for (JsonObject& step : full.object_array("steps")) {
    const std::int64_t count = step.positive_integer("count");
    if (count > 1 << 20) step.fail("count", "is too large");
    r.op_profile.push_back({step.string("step"), static_cast<int>(count), step.non_negative("gpu_ms"),
                            step.non_negative("host_ms")});
  }
  if (r.op_profile.empty()) full.fail("steps", "holds no steps");
}

MeasuredRun read_record(JsonObject record, const std::string& device) {
  MeasuredRun r;
  r.file = record.file();
  r.pointer = record.pointer();
  r.device = device;
  r.model = record.string("model");
  r.moe_comm = record.string("moe_comm");
  if (r.moe_comm != "alltoall" && r.moe_comm != "allreduce")
    record.fail("moe_comm", "expected alltoall or allreduce");
  r.phase = record.string("phase");
  if (r.phase != "forward" && r.phase != "prefill") record.fail("phase", "expected forward or prefill");
  r.schedule = record.string("schedule");
  if (runner_schedule(r.schedule) == nullptr) {
    std::string known;
    for (const RunnerSchedule& k : runner_schedules())
      known += std::string(known.empty() ? "" : ", ") + k.runner;
    record.fail("schedule", "expected one of the runner's schedules: " + known);
  }
  r.gpus = positive_int(record, "gpus");
  r.ep = positive_int(record, "ep");
  r.tp = positive_int(record, "tp");
  r.layers = positive_int(record, "layers");
  r.tokens_per_rank = positive_int(record, "tokens_per_rank");
  r.seq = positive_int(record, "seq");
  r.routing = record.string("routing");
  const std::int64_t seed = record.integer("seed");
  if (seed < 0) record.fail("seed", "must be an integer >= 0");
  r.seed = static_cast<std::uint64_t>(seed);
  r.sync_splits = record.boolean("sync_splits");
  if (auto attention = record.optional_string("attention")) r.attention = *attention;
  if (!hw::try_parse_attention_impl(r.attention)) record.fail("attention", "expected unfused or fused");
  if (auto experts = record.optional_string("experts")) r.experts = *experts;
  if (r.experts != "loop" && r.experts != "grouped") record.fail("experts", "expected loop or grouped");
  if (auto dtype = record.optional_string("dtype"); dtype && *dtype != "bf16")
    record.fail("dtype", "expected bf16 (the runner's only dtype)");
  r.tokens_to_expert = models::recorded_slots(record.raw("tokens_to_expert"), record.file(),
                                              record.child_pointer("tokens_to_expert"));
  r.stack_ms = p50(record, "stack_ms");
  r.compute_only_ms = p50(record, "compute_only_ms");
  r.comm_only_ms = p50(record, "comm_only_ms");
  r.exposed_comm_ms = record.number("exposed_comm_ms");
  r.overlap_pct = record.number("overlap_pct");
  if (!(r.overlap_pct >= 0 && r.overlap_pct <= 100)) record.fail("overlap_pct", "must be in [0, 100]");
  r.speedup_vs_regular = record.optional_number("speedup_vs_regular");
  if (r.speedup_vs_regular && !(*r.speedup_vs_regular > 0 && *r.speedup_vs_regular <= 1000))
    record.fail("speedup_vs_regular", "must be in (0, 1000]");
  if (auto check = record.optional_object("check")) r.check_passed = check->boolean("passed");
  if (auto profile = record.optional_object("op_profile")) read_op_profile(profile->object("full"), r);
  // Other keys (iterations, per-rank times, provenance details) are informational.
  return r;
}

MeasuredConfigSummary summarize_group(const std::vector<const MeasuredComparison*>& group) {
  MeasuredConfigSummary s;
  s.label = group.front()->run.label();
  s.device = group.front()->run.device;
  s.hw = group.front()->hw;
  s.schedule = group.front()->run.schedule;
  s.runs = static_cast<int>(group.size());
  std::vector<double> measured, predicted, speedups, predicted_speedups;
  for (const MeasuredComparison* c : group) {
    measured.push_back(c->run.stack_ms);
    predicted.push_back(c->predicted_ms);
    if (c->run.speedup_vs_regular && c->predicted_speedup) {
      speedups.push_back(*c->run.speedup_vs_regular);
      predicted_speedups.push_back(*c->predicted_speedup);
    }
  }
  s.measured_ms_median = median(measured);
  s.measured_ms_min = *std::min_element(measured.begin(), measured.end());
  s.measured_ms_max = *std::max_element(measured.begin(), measured.end());
  s.predicted_ms = median(predicted);
  if (!speedups.empty()) {
    s.speedup_median = median(speedups);
    s.speedup_min = *std::min_element(speedups.begin(), speedups.end());
    s.speedup_max = *std::max_element(speedups.begin(), speedups.end());
    s.predicted_speedup_median = median(predicted_speedups);
  }
  return s;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

std::string MeasuredRun::config_key() const {
  return model + "|" + moe_comm + "|" + std::to_string(gpus) + "|" + std::to_string(layers) + "|" +
         std::to_string(tokens_per_rank) + "|" + std::to_string(seq) + "|" + routing + "|" +
         std::to_string(seed) + "|" + attention + "|" + experts + "|" + (sync_splits ? "sync" : "async") +
         "|" + device;
}

std::string MeasuredRun::label() const {
  return model + " " + (moe_comm == "alltoall" ? "EP" : "TP=EP") + std::to_string(gpus) + " T" +
         std::to_string(tokens_per_rank) + " s" + std::to_string(seq) + " " + routing + " " + schedule +
         (experts == "grouped" ? " (grouped experts)" : "");
}

std::vector<MeasuredRun> read_layer_runner_results(const std::string& file) {
  const nlohmann::json document = read_json_file(file, InputKind::DATA);
  if (!document.is_object()) throw ConfigError(file, "", "must be a layer_runner results object");
  JsonObject top(document, file);
  if (top.integer("schema_version") != 1)
    top.fail("schema_version", "must be 1 (kernels/ results, see kernels/README.md)");
  std::string device;
  if (top.has("gpus")) {
    const nlohmann::json& gpus = top.raw("gpus");
    if (gpus.is_array() && !gpus.empty() && gpus[0].contains("name") && gpus[0]["name"].is_string())
      device = gpus[0]["name"].get<std::string>();
  }
  std::vector<MeasuredRun> runs;
  for (JsonObject& record : top.object_array("results")) runs.push_back(read_record(record, device));
  if (runs.empty()) top.fail("results", "holds no records");
  return runs;
}

std::string profile_for_device(const std::string& device) {
  const std::string name = lower(device);
  for (const char* profile : {"h100", "h200", "a100", "b200", "a10g", "mi300x", "mi325x", "mi355x"}) {
    if (name.find(profile) != std::string::npos) return profile;
  }
  return "";
}

schedules::Scenario measured_scenario(const MeasuredRun& run, const hw::HwProfile& hw) {
  using namespace schedules;
  schedules::Scenario s;
  s.model = models::load_model(run.model);
  s.model.attention.window = models::AttentionWindow::FULL;  // the layer runner attends over whole sequences
  s.hw = hw;
  s.parallel.ep = run.ep;
  s.parallel.tp = run.tp;
  s.parallel.nodes = 1;
  s.parallel.moe_comm = run.moe_comm == "allreduce" ? MoeComm::ALLREDUCE : MoeComm::ALLTOALL;
  s.workload.phase = run.phase == "prefill" ? Phase::PREFILL : Phase::FORWARD;
  s.workload.tokens = run.tokens_per_rank;
  s.workload.seq_len = run.seq;
  s.workload.layers = run.layers;
  s.workload.seed = run.seed;
  s.workload.routing.kind = models::RoutingSpec::Kind::RECORDED;
  s.workload.routing.recorded = run.tokens_to_expert;
  s.workload.routing.histogram_file = run.file + ":" + run.pointer + "/tokens_to_expert";
  s.workload.attention = hw::try_parse_attention_impl(run.attention).value();  // checked when read
  s.workload.expert_loop = run.experts == "loop";
  s.options["sync_splits"] = run.sync_splits ? "on" : "off";
  const RunnerSchedule& schedule = *runner_schedule(run.schedule);  // checked when read
  s.schedule = schedule.schedule;
  for (const auto& [key, value] : schedule.options) s.options[key] = value;
  return s;
}

std::vector<MeasuredComparison> compare_measured(const std::vector<MeasuredRun>& runs,
                                                 const std::string& hw_override) {
  std::map<std::string, hw::HwProfile> profiles;
  auto profile_of = [&](const MeasuredRun& run) -> const hw::HwProfile& {
    std::string name = hw_override.empty() ? profile_for_device(run.device) : hw_override;
    if (name.empty()) {
      throw ConfigError(run.file, "/gpus/0/name",
                        "= \"" + run.device + "\" matches no shipped profile: give --hw NAME|FILE");
    }
    auto it = profiles.find(name);
    if (it == profiles.end()) it = profiles.emplace(name, hw::load_profile(name)).first;
    return it->second;
  };
  std::vector<MeasuredComparison> out;
  std::map<std::string, double> regular_predicted;
  for (const MeasuredRun& run : runs) {
    if (!run.check_passed) {
      throw ConfigError(run.file, run.pointer + "/check/passed",
                        "is false: the runner's correctness check failed, so its time is not compared");
    }
    const hw::HwProfile& hw = profile_of(run);
    schedules::SimulationResult result = schedules::simulate(measured_scenario(run, hw));
    MeasuredComparison c;
    c.run = run;
    c.hw = hw.name + (hw.provenance.kind == hw::ProvenanceKind::CALIBRATED ? " (calibrated)" : "");
    c.predicted_ms = result.step_ms;
    c.predicted_exposed_ms = result.exposed_comm_ms;
    c.predicted_overlap_pct = result.overlap_pct;
    if (!run.op_profile.empty()) {
      const int rank = result.program->is_simulated(run.op_profile_rank) ? run.op_profile_rank : 0;
      c.predicted_op_profile = predict_op_profile(*result.program, result.run, rank);
    }
    if (runner_schedule(run.schedule)->baseline) regular_predicted[run.config_key()] = result.step_ms;
    out.push_back(std::move(c));
  }
  for (MeasuredComparison& c : out) {
    auto it = regular_predicted.find(c.run.config_key());
    if (!runner_schedule(c.run.schedule)->baseline && it != regular_predicted.end())
      c.predicted_speedup = it->second / c.predicted_ms;
  }
  return out;
}

std::vector<MeasuredConfigSummary> summarize_by_config(const std::vector<MeasuredComparison>& comparisons) {
  std::vector<std::vector<const MeasuredComparison*>> groups;
  std::map<std::string, std::size_t> group_of;
  for (const MeasuredComparison& c : comparisons) {
    // Newlines appear in none of the parts, so the joined key cannot make two groups collide.
    const std::string key = c.hw + "\n" + c.run.config_key() + "\n" + c.run.schedule;
    const auto [it, added] = group_of.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(&c);
  }
  std::vector<MeasuredConfigSummary> out;
  out.reserve(groups.size());
  for (const auto& group : groups) out.push_back(summarize_group(group));
  return out;
}

}  // namespace moesim::validate
