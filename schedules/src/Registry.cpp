#include "moesim/schedules/Registry.hpp"

#include <algorithm>
#include <mutex>

#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::schedules {

void ScheduleRegistry::add(Schedule schedule) {
  MOE_CHECK(!schedule.name.empty() && schedule.build) << "a schedule needs a name and a builder";
  MOE_CHECK(find(schedule.name) == nullptr) << "schedule '" << schedule.name << "' is registered twice";
  schedules_.push_back(std::move(schedule));
}

void ScheduleRegistry::add(PipelineSchedule schedule) {
  MOE_CHECK(!schedule.name.empty() && schedule.order && schedule.parts && schedule.place && schedule.part_at)
      << "a pipeline schedule needs a name, parts, placement and an order";
  MOE_CHECK(find_pipeline(schedule.name) == nullptr)
      << "pipeline schedule '" << schedule.name << "' is registered twice";
  pipelines_.push_back(std::move(schedule));
}

const PipelineSchedule* ScheduleRegistry::find_pipeline(const std::string& name) const {
  auto it = std::find_if(pipelines_.begin(), pipelines_.end(),
                         [&](const PipelineSchedule& s) { return s.name == name; });
  return it == pipelines_.end() ? nullptr : &*it;
}

const Schedule* ScheduleRegistry::find(const std::string& name) const {
  auto it =
      std::find_if(schedules_.begin(), schedules_.end(), [&](const Schedule& s) { return s.name == name; });
  return it == schedules_.end() ? nullptr : &*it;
}

ScheduleRegistry& schedule_registry() {
  static ScheduleRegistry registry;
  static std::once_flag filled;
  std::call_once(filled, [] { families::register_builtin(registry); });
  return registry;
}

const Schedule& find_schedule(const std::string& name) {
  if (const Schedule* s = schedule_registry().find(name)) return *s;
  std::string names;
  for (const auto& s : schedule_registry().all()) names += (names.empty() ? "" : ", ") + s.name;
  throw ConfigError("", "--schedule", "= \"" + name + "\": unknown schedule (known: " + names + ")");
}

void require_schedule(bool ok, const std::string& message) {
  if (!ok) throw ScheduleError(message);
}

const PipelineSchedule& find_pipeline_schedule(const std::string& name) {
  if (const PipelineSchedule* s = schedule_registry().find_pipeline(name)) return *s;
  std::string names;
  for (const auto& s : schedule_registry().pipelines()) names += (names.empty() ? "" : ", ") + s.name;
  throw ConfigError("", "--pp-schedule",
                    "= \"" + name + "\": unknown pipeline schedule (known: " + names + ")");
}

void check_options(const Scenario& s, const Schedule& schedule) {
  for (const auto& option : s.options) {
    const auto& [key, value] = option;
    const auto& known = schedule.options;
    // Compared through `option`: clang 15 (the fuzz build's compiler) cannot capture a structured binding.
    if (std::any_of(known.begin(), known.end(),
                    [&](const ScheduleOption& o) { return o.key == option.first; }))
      continue;
    std::string list;
    for (const auto& o : known) list += (list.empty() ? "" : ", ") + o.key;
    throw ConfigError("", "--opt",
                      key + "=" + value + ": unknown option for --schedule " + schedule.name +
                          " (known: " + (list.empty() ? "none" : list) + ")");
  }
}

std::optional<double> FigureGroup::number(const std::string& name) const {
  for (const Figure& f : values) {
    if (f.name != name) continue;
    return std::visit([](auto v) { return static_cast<double>(v); }, f.value);
  }
  return std::nullopt;
}

}  // namespace moesim::schedules
