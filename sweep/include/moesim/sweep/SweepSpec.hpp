#pragma once
/**
 * @file A sweep file: a base scenario and axes, expanded into points.
 *
 *   { "schema_version": 1,
 *     "base":   { "model": "deepseek-v3", "hw": "mi325x", "phase": "train", "layers": 6 },
 *     "axes":   { "ep": [8, 16, 32], "nodes": [1, 2, 4], "schedule": ["regular", "farskip"],
 *                 "seq": { "from": 1024, "to": 8192, "mul": 2 } },
 *     "zip":    [["ep", "nodes"]],            // these axes advance together
 *     "filter": ["ep <= nodes * 8"],          // keep points where every condition holds
 *     "metric": "step_ms" }                   // what the report plots
 *
 * Keys of base and axes are the `moesim simulate` flags without their dashes ("moe-comm", "opt"...).
 */
#include <map>
#include <string>
#include <vector>

namespace moesim::sweep {

/** @brief One point: flag name → value text, in a stable order. */
struct Point {
  std::string id;  ///< "ep=8,nodes=1,schedule=farskip": the axis values, used to resume
  std::map<std::string, std::string> axis_values;
  std::map<std::string, std::string> params;  ///< base overlaid with the axis values
};

struct SweepSpec {
  std::string file;
  std::map<std::string, std::string> base;
  std::vector<std::string> axis_names;  ///< in file order
  std::map<std::string, std::vector<std::string>> axes;
  std::vector<std::vector<std::string>> zip_groups;
  std::vector<std::string> filters;
  std::string metric = "step_ms";
};

/** @brief Strict parse; ConfigError with file and JSON pointer on any problem. */
SweepSpec parse_sweep(const std::string& text, const std::string& file);
SweepSpec load_sweep(const std::string& path);

/** @brief Cartesian product over axes (zip groups move together), filtered, in a deterministic order. */
std::vector<Point> expand(const SweepSpec& spec);

/** @brief Evaluates "a OP b" with a, b a flag name, a number, or "name * number"; OP one of < <= > >= == !=.
 */
bool passes(const std::string& condition, const std::map<std::string, std::string>& params,
            const std::string& file);

}  // namespace moesim::sweep
