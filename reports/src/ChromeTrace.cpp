#include "moesim/reports/ChromeTrace.hpp"

#include <nlohmann/json.hpp>

namespace moesim::reports {

namespace {
constexpr int kHostThread = 100;

nlohmann::json slice(const std::string& name, const std::string& cat, int pid, int tid, sim::TimeNs begin,
                     sim::TimeNs end) {
  // Microseconds with nanosecond resolution, the unit the trace format expects.
  return {{"name", name},
          {"cat", cat},
          {"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"ts", static_cast<double>(begin) / 1e3},
          {"dur", static_cast<double>(end - begin) / 1e3}};
}
}  // namespace

void write_chrome_trace(std::ostream& out, const schedules::SimulationResult& r) {
  const auto& program = *r.program;
  nlohmann::json events = nlohmann::json::array();
  for (int rank : program.simulated_ranks()) {
    std::string label = "rank " + std::to_string(rank) + (r.symmetric ? " (stands for every rank)" : "");
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", rank}, {"args", {{"name", label}}}});
    const auto& streams = program.streams(rank);
    for (std::size_t s = 0; s < streams.size(); ++s) {
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", rank},
                        {"tid", s},
                        {"args", {{"name", streams[s] + " stream"}}}});
    }
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", rank},
                      {"tid", kHostThread},
                      {"args", {{"name", "host thread"}}}});
  }
  for (std::size_t i = 0; i < program.ops().size(); ++i) {
    const auto& op = program.ops()[i];
    const auto& t = r.run.ops[i];
    if (op.kind == sim::OpKind::HOST) {
      events.push_back(slice(op.name, op.category, op.rank, kHostThread, t.launch_begin, t.launched));
      continue;
    }
    if (t.launched > t.launch_begin) {
      events.push_back(
          slice("launch " + op.name, "launch", op.rank, kHostThread, t.launch_begin, t.launched));
    }
    if (op.is_comm() && t.data_start > t.start) {
      events.push_back(
          slice(op.name + " (waiting for peers)", "wait", op.rank, op.stream, t.start, t.data_start));
      events.push_back(slice(op.name, op.category, op.rank, op.stream, t.data_start, t.end));
    } else {
      events.push_back(slice(op.name, op.category, op.rank, op.stream, t.start, t.end));
    }
  }
  nlohmann::json doc = {
      {"traceEvents", events},
      {"displayTimeUnit", "ns"},
      {"otherData",
       {{"model", r.scenario.model.name}, {"hw", r.scenario.hw.name}, {"schedule", r.scenario.schedule}}}};
  out << doc.dump() << "\n";
}

}  // namespace moesim::reports
