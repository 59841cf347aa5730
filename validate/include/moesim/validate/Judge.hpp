#pragma once
/**
 * @file The judge of `moesim validate`: tolerances and verdicts, the rows `--json` writes
 * ({source, scenario, metric, published_or_measured, predicted, error_pct}; published rows add their status,
 * their tolerance or claim, and their bound), and the text tables.
 *
 * A measured record (or, judged by config, the median of a config's repeated runs) is over when its
 * |time error| exceeds the time tolerance or its |predicted − measured| FarSkip speedup exceeds the
 * speedup tolerance; it counts once either way. A tolerance of 0 judges nothing.
 */
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "moesim/validate/Measured.hpp"
#include "moesim/validate/Published.hpp"

namespace moesim::validate {

struct JudgeOptions {
  double time_tolerance_pct = 0;  ///< a record is over past this |time error| (0: not judged)
  double speedup_tolerance = 0;   ///< ... or past this |speedup error| (0: not judged)
  bool by_config = false;         ///< judge the median of each config's repeated runs, not each record
  bool steps = false;             ///< add each op-profile step, measured and predicted
};

/** @brief --json rows of measured comparisons (steps and config medians as the options ask). */
nlohmann::json measured_rows_json(const std::vector<MeasuredComparison>& cs, const JudgeOptions& o);

/** @brief --json rows of published comparisons. */
nlohmann::json published_rows_json(const std::vector<ValidationRow>& rows);

/** @brief Records (or, by config, configs) over the tolerances. */
int measured_failures(const std::vector<MeasuredComparison>& cs, const JudgeOptions& o);

/** @brief The measured tables: records, config medians and op-profile steps as asked, and the verdict line.
 */
void print_measured(std::ostream& out, const std::vector<MeasuredComparison>& cs, const JudgeOptions& o);

/** @brief Published rows whose status is off when `tolerance_pct` > 0 (the rows were judged with it); else 0.
 */
int published_failures(const std::vector<ValidationRow>& rows, double tolerance_pct);

/** @brief The published table (a bound's arithmetic under its row) and the count of each status. */
void print_published(std::ostream& out, const std::vector<ValidationRow>& rows, double tolerance_pct);

}  // namespace moesim::validate
