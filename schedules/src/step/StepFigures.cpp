#include "StepFigures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "moesim/schedules/StepTime.hpp"

namespace moesim::schedules::detail {

namespace {
using Interval = std::pair<sim::TimeNs, sim::TimeNs>;

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

sim::TimeNs length(const std::vector<Interval>& v) {
  sim::TimeNs total = 0;
  for (const Interval& i : v) total += i.second - i.first;
  return total;
}

/** Time of `a` (merged) not under `b` (merged). */
sim::TimeNs uncovered(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  sim::TimeNs total = 0;
  std::size_t j = 0;
  for (const Interval& i : a) {
    sim::TimeNs cursor = i.first;
    while (j < b.size() && b[j].second <= cursor) ++j;
    for (std::size_t k = j; k < b.size() && b[k].first < i.second; ++k) {
      if (b[k].first > cursor) total += b[k].first - cursor;
      cursor = std::max(cursor, b[k].second);
    }
    if (cursor < i.second) total += i.second - cursor;
  }
  return total;
}

StepComm kind_of(const std::string& category) {
  if (category.rfind("dispatch", 0) == 0 || category.rfind("combine", 0) == 0) return StepComm::ALL_TO_ALL;
  if (category.rfind("tp_", 0) == 0) return StepComm::TENSOR;
  if (category.rfind("p2p", 0) == 0) return StepComm::PIPELINE;
  if (category.rfind("dp_", 0) == 0) return StepComm::DATA;
  return StepComm::OTHER;
}

constexpr auto index(StepComm kind) {
  return static_cast<std::size_t>(kind);
}
}  // namespace

}  // namespace moesim::schedules::detail

namespace moesim::schedules {

std::vector<RankStepTime> step_time_by_rank(const SimulationResult& r) {
  using namespace detail;
  const auto& ops = r.program->ops();
  std::map<int, std::vector<Interval>> compute, busy;
  std::map<int, std::array<std::vector<Interval>, kStepCommKinds>> comm;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const sim::Op& op = ops[i];
    const sim::OpTiming& t = r.run.ops[i];
    if (op.kind == sim::OpKind::HOST || op.kind == sim::OpKind::TASK) continue;
    busy[op.rank].emplace_back(t.start, t.end);
    if (op.is_comm()) {
      comm[op.rank][index(kind_of(op.category))].emplace_back(t.start, t.end);
    } else {
      compute[op.rank].emplace_back(t.start, t.end);
    }
  }
  std::vector<RankStepTime> out;
  for (int rank : r.program->simulated_ranks()) {
    RankStepTime time;
    time.rank = rank;
    time.idle_ms = static_cast<double>(r.run.makespan_ns - length(merged(busy[rank]))) / 1e6;
    const auto computing = merged(compute[rank]);
    for (std::size_t k = 0; k < kStepCommKinds; ++k) {
      const auto intervals = merged(comm[rank][k]);
      time.comm_ms[k] = static_cast<double>(length(intervals)) / 1e6;
      time.exposed_ms[k] = static_cast<double>(uncovered(intervals, computing)) / 1e6;
    }
    out.push_back(time);
  }
  return out;
}

}  // namespace moesim::schedules

namespace moesim::schedules::detail {

std::optional<FigureGroup> step_figures(const SimulationResult& r, const BuiltProgram& built) {
  const Scenario& s = r.scenario;
  if (!is_step(s)) return std::nullopt;
  const auto& program = *r.program;
  const auto& ops = program.ops();
  sim::TimeNs optimizer = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].category == "optimizer" && ops[i].rank == program.simulated_ranks().front() &&
        ops[i].kind != sim::OpKind::HOST && ops[i].kind != sim::OpKind::TASK && !ops[i].is_comm())
      optimizer += r.run.ops[i].end - r.run.ops[i].start;
  }
  const auto by_rank = step_time_by_rank(r);
  const auto ranks = static_cast<double>(by_rank.size());
  const double step = static_cast<double>(r.run.makespan_ns);
  double idle = 0;
  std::array<double, kStepCommKinds> comm_ms{}, exposed_ms{};
  for (const RankStepTime& time : by_rank) {
    idle += time.idle_ms * 1e6;
    for (std::size_t k = 0; k < kStepCommKinds; ++k) {
      comm_ms[k] += time.comm_ms[k] / ranks;
      exposed_ms[k] += time.exposed_ms[k] / ranks;
    }
  }
  const int gpus = total_gpus(s);
  const double seconds = r.step_ms / 1e3;
  FigureGroup g;
  g.key = "step";
  g.in_metrics = true;
  const double per_gpu = seconds > 0 ? r.tokens_per_s / gpus : 0;
  const double tflops = seconds > 0 ? built.flops_rank0 / seconds / 1e12 : 0;
  const double bubble = step > 0 ? 100.0 * idle / ranks / step : 0;
  g.values = {{"pp", std::int64_t{s.parallel.pp}},
              {"vpp", std::int64_t{s.parallel.vpp}},
              {"micro_batches", std::int64_t{s.workload.micro_batches}},
              {"gpus", std::int64_t{gpus}},
              {"tokens_per_s_per_gpu", per_gpu},
              {"tflops_per_gpu", tflops},
              {"bubble_pct", bubble},
              {"all_to_all_ms", comm_ms[index(StepComm::ALL_TO_ALL)], true},
              {"all_to_all_exposed_ms", exposed_ms[index(StepComm::ALL_TO_ALL)], true},
              {"tp_ms", comm_ms[index(StepComm::TENSOR)], true},
              {"tp_exposed_ms", exposed_ms[index(StepComm::TENSOR)], true},
              {"p2p_ms", comm_ms[index(StepComm::PIPELINE)], true},
              {"p2p_exposed_ms", exposed_ms[index(StepComm::PIPELINE)], true},
              {"dp_ms", comm_ms[index(StepComm::DATA)], true},
              {"dp_exposed_ms", exposed_ms[index(StepComm::DATA)], true},
              {"optimizer_ms", static_cast<double>(optimizer) / 1e6, true}};
  g.summary.push_back(fmt::format(
      "# step ({} x PP {}{}, {} micro-batches, {} GPUs, optimizer {}): {:.4g} tokens/s/GPU, {:.4g} "
      "TFLOP/s/GPU, "
      "bubble {:.1f}% of the step",
      s.pp_schedule, s.parallel.pp, s.parallel.vpp > 1 ? fmt::format(" VPP {}", s.parallel.vpp) : "",
      s.workload.micro_batches, gpus, to_string(s.optimizer), per_gpu, tflops, bubble));
  g.summary.push_back(fmt::format(
      "# step exposed communication (ms per rank): all-to-all {:.3f} of {:.3f}, TP {:.3f} of {:.3f}, "
      "pipeline "
      "p2p {:.3f} of {:.3f}, data-parallel {:.3f} of {:.3f}; optimizer step {:.3f}",
      exposed_ms[index(StepComm::ALL_TO_ALL)], comm_ms[index(StepComm::ALL_TO_ALL)],
      exposed_ms[index(StepComm::TENSOR)], comm_ms[index(StepComm::TENSOR)],
      exposed_ms[index(StepComm::PIPELINE)], comm_ms[index(StepComm::PIPELINE)],
      exposed_ms[index(StepComm::DATA)], comm_ms[index(StepComm::DATA)],
      static_cast<double>(optimizer) / 1e6));
  return g;
}

}  // namespace moesim::schedules::detail
