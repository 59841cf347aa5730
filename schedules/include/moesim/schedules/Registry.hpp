#pragma once
/**
 * @file The schedule registry: every schedule `--schedule` accepts, described once by its family.
 *
 * A schedule family is one source file (or folder) under schedules/src/ that defines
 * `void moesim::schedules::families::<family>(ScheduleRegistry&)` and adds its schedules there; the
 * family is listed once in schedules/CMakeLists.txt (MOESIM_SCHEDULE_FAMILIES), which also fixes the
 * order of `moesim list schedules`. A schedule's name appears in its family's file and nowhere else:
 * listing, `--opt` checking, help, validation, building and the family's extra figures all come from
 * the Schedule it registers.
 *
 *   simulate(scenario) ─► find_schedule(name) ─► validate ─► build ─► engine run ─► figures
 */
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "moesim/schedules/Figures.hpp"
#include "moesim/schedules/Scenario.hpp"
#include "moesim/sim/Program.hpp"

namespace moesim::schedules {

struct SimulationResult;
namespace detail {
class ChunkEmitter;
}  // namespace detail

/** @brief A schedule option (`--opt KEY=VALUE`), for `moesim list schedules` and error messages. */
struct ScheduleOption {
  std::string key;
  std::string values;  ///< what it accepts, e.g. "on|off", "N", "all|first:N|last:N"
  std::string description;
};

/** @brief The op DAG a schedule built for a scenario, with what only the builder knows about it. */
struct BuiltProgram {
  std::shared_ptr<sim::Program> program;
  double flops_rank0 = 0;            ///< model FLOPs rank 0 runs (MFU)
  int layers = 0;                    ///< layers the program runs: layer_ms = step_ms / layers
  double tokens_per_step = 0;        ///< tokens the whole group processes in one step (tokens/s before x dp)
  int degree = 0;                    ///< overlap degree d the program runs at (0: the schedule has none)
  std::vector<FigureGroup> figures;  ///< the family's figures known from building alone
  std::string math_dtype;            ///< the peak MFU is relative to when not the workload dtype (tf32 tiles)
};

/** @brief Everything the rest of moesim knows about one schedule. */
struct Schedule {
  std::string name;
  std::string help;                     ///< one line for `moesim list schedules`
  std::vector<ScheduleOption> options;  ///< every --opt key it accepts; others are rejected
  /** Rejects scenarios it cannot run, naming the flag (ConfigError/ScheduleError); empty: none. */
  std::function<void(const Scenario&)> validate;
  std::function<BuiltProgram(const Scenario&)> build;
  /** Figures of its own, from the finished run (JSON groups and summary lines); empty: none. */
  std::function<std::vector<FigureGroup>(const SimulationResult&)> figures;
  /** Accepts `--degree N` (the overlap degree of a token pipeline). */
  bool takes_degree = false;
  /** The degrees `--degree auto` simulates, keeping the fastest; empty function: runs as given. */
  std::function<std::vector<int>(const Scenario&)> degrees;
  /** Why the power-cap governor cannot apply to its programs; empty: it applies. */
  std::string power_not_modeled;
  /**
   * Its layers as chunks of one micro-batch each, for whole steps (pipeline stages, micro-batches, the
   * optimizer: is_step()); empty function: the schedule builds layer stacks only.
   */
  std::function<std::shared_ptr<const detail::ChunkEmitter>(const Scenario&)> chunks;
};

/** @brief One action of a pipeline rank, in the order the rank runs them. */
struct PipelineAction {
  enum class Kind {
    FORWARD,           ///< a forward chunk of `micro_batch` in `slot`
    BACKWARD,          ///< a backward chunk of `micro_batch` in `slot`
    WEIGHT,            ///< the weight gradients of the oldest backward chunk that deferred them
    FORWARD_BACKWARD,  ///< a forward and a backward chunk interleaved (each hides the other's all-to-alls)
  };
  Kind kind = Kind::FORWARD;
  int slot = 0;  ///< which of the rank's model chunks (interleaved: virtual stage; DualPipe: direction)
  int micro_batch = 0;           ///< of the forward chunk, or of the only one
  int backward_slot = 0;         ///< FORWARD_BACKWARD: the backward chunk's slot
  int backward_micro_batch = 0;  ///< FORWARD_BACKWARD: the backward chunk's micro-batch
  bool defer_wgrad = false;      ///< the backward chunk leaves its weight gradients to a later WEIGHT

  /** @brief A FORWARD or BACKWARD chunk (or a WEIGHT pass). */
  static PipelineAction chunk(Kind kind, int slot = 0, int micro_batch = 0, bool defer_wgrad = false) {
    PipelineAction a;
    a.kind = kind;
    a.slot = slot;
    a.micro_batch = micro_batch;
    a.defer_wgrad = defer_wgrad;
    return a;
  }
  /** @brief A forward chunk and a backward chunk run as an overlapped pair. */
  static PipelineAction pair(int slot, int micro_batch, int backward_slot, int backward_micro_batch) {
    PipelineAction a = chunk(Kind::FORWARD_BACKWARD, slot, micro_batch);
    a.backward_slot = backward_slot;
    a.backward_micro_batch = backward_micro_batch;
    return a;
  }
};

/** @brief Where a model part of a micro-batch runs. */
struct PipelinePlace {
  int stage = 0;
  int slot = 0;
};

/**
 * @brief A pipeline schedule (`--pp-schedule`): how the model's layers split into parts, where each part of
 * each micro-batch runs, and the order of every stage's chunks. Registered by a family like the layer
 * schedules and listed with them.
 */
struct PipelineSchedule {
  std::string name;
  std::string help;  ///< one line for `moesim list schedules`
  /** Rejects scenarios it cannot run, naming the flag (ScheduleError); empty: none. */
  std::function<void(const Scenario&)> validate;
  /** Contiguous layer ranges the model splits into. */
  std::function<int(const Scenario&)> parts;
  /** Where part `part` of micro-batch `micro_batch` runs. */
  std::function<PipelinePlace(const Scenario&, int micro_batch, int part)> place;
  /** The part that `stage` runs in `slot` for `micro_batch`. */
  std::function<int(const Scenario&, int micro_batch, int stage, int slot)> part_at;
  /** What `stage` runs, in order (forward-only phases: forward chunks only). */
  std::function<std::vector<PipelineAction>(const Scenario&, int stage)> order;
};

/** @brief The schedules known to this process, in registration order. */
class ScheduleRegistry {
 public:
  /** @brief Adds `schedule`; InternalError when the name is taken or it has no builder. */
  void add(Schedule schedule);
  /** @brief The schedule named `name`, or nullptr. */
  const Schedule* find(const std::string& name) const;
  const std::vector<Schedule>& all() const { return schedules_; }
  /** @brief Adds a pipeline schedule; InternalError when the name is taken. */
  void add(PipelineSchedule schedule);
  /** @brief The pipeline schedule named `name`, or nullptr. */
  const PipelineSchedule* find_pipeline(const std::string& name) const;
  const std::vector<PipelineSchedule>& pipelines() const { return pipelines_; }

 private:
  std::vector<Schedule> schedules_;
  std::vector<PipelineSchedule> pipelines_;
};

/** @brief The process's registry, holding every built-in family on first use. */
ScheduleRegistry& schedule_registry();

/** @brief The schedule `name`; ConfigError at --schedule listing the known names otherwise. */
const Schedule& find_schedule(const std::string& name);
/** @brief ScheduleError(message) unless `ok`: how a schedule's validate() refuses a scenario. */
void require_schedule(bool ok, const std::string& message);
/** @brief The pipeline schedule `name`; ConfigError at --pp-schedule listing the known names otherwise. */
const PipelineSchedule& find_pipeline_schedule(const std::string& name);

/**
 * @brief Rejects `--opt` keys the schedule does not declare (ConfigError at --opt naming the key and
 * the known ones).
 */
void check_options(const Scenario& s, const Schedule& schedule);

namespace families {
/** @brief Adds the built-in families, in MOESIM_SCHEDULE_FAMILIES order (generated in the build tree). */
void register_builtin(ScheduleRegistry& registry);
}  // namespace families

}  // namespace moesim::schedules
