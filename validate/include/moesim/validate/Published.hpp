#pragma once
/**
 * @file Published results the shipped schedules can be checked against (`moesim validate --published`).
 *
 * The figures are data: the .json files of <data root>/validate/published, read in file-name order. A file
 * holds groups, each a source (paper and table or figure), a setting in words, the `moesim simulate` flags of
 * that setting, and rows. A row's `published` and `predicted` values are expressions:
 *
 *   3.1                                          a number (a figure copied from the source)
 *   {"value": "step_ms", "flags": {...}}         a metric of the simulation of the group's flags + these
 *   {"ratio": [a, b]}  {"gain_pct": [a, b]}      a / b,  100 (a / b − 1)
 *   {"sum": [a, b, ...]}  {"product": [...]}     a + b + ...,  a · b · ...
 *   {"min": [a, b, ...]}  {"max": [...]}         of the listed expressions
 *   {"min": {"over": [{flags}, ...], "of": e}}   e evaluated once per flag set, the smallest (or "max")
 *   {"formula": "name", "args": {...}}           a closed form the model defines (no simulation)
 *
 * Metrics: step_ms, layer_ms, overlap_pct, tokens_per_s, sm_util_pct, mfu_pct, forward_overlap_pct and
 * backward_overlap_pct (overlap of one pass of a training step, rank 0), dispatch_us and combine_us (one
 * forward Dispatch or Combine on rank 0, first op's start to last op's end, mean over MoE layers: with a
 * number of bytes, {"ratio": [kB, {"value": "dispatch_us"}]} is a bandwidth in GB/s), and every number of
 * a schedule family's figure group as "group.name" (e.g. "flashmoe.dispatch_bytes"). Formulas:
 * flashmoe_symmetric_tensor_gib (FlashMoE §3.2; args tokens, experts, hidden, element_bytes, tile_m).
 * A "model" flag ending in .json names a spec file beside the data file (a variant of a shipped model).
 * Simulations are shared between rows of one file: each distinct flag set runs once.
 *
 * Every row gets a status (RowStatus):
 *   - a figure row is `reproduced` when |predicted − published| ≤ its tolerance (`tolerance_pct`, default
 *     15% of the published value);
 *   - a claim row (`"holds": ">" | ">=" | "<" | "<="`) states what the source says in words, "predicted
 *     OP published" (a threshold, e.g. payload efficiency >= 0.9): `reproduced` when it holds;
 *   - a row with a `bound` ({"upper" | "lower": e, "why": text}, e computed from the source's own numbers,
 *     never from a simulation) is `bounded` when the published figure lies beyond the bound, so that no
 *     model of the stated setting can reach it, and the prediction lies on the reachable side;
 *   - anything else is `off`.
 */
#include <optional>
#include <string>
#include <vector>

namespace moesim::validate {

/** @brief How a published row compares with its prediction. */
enum class RowStatus {
  REPRODUCED,  ///< within the row's tolerance, or its claim holds
  BOUNDED,     ///< the published figure lies beyond a bound computed from the source's own numbers
  OFF,         ///< neither
};

/** @brief "reproduced", "bounded" or "off". */
const char* to_string(RowStatus status);

/** @brief The tolerance of a figure row that names none: the spec's ±15% for published results. */
inline constexpr double kDefaultPublishedTolerancePct = 15.0;

/** @brief A bound on what the published figure can be, with the arithmetic that gives it. */
struct RowBound {
  bool upper = true;       ///< no model of the setting gives more than `value` (false: less)
  double value = 0;        ///< the bound
  std::string arithmetic;  ///< the expression with its numbers, e.g. "(7.405 + 7.405 / 2) / 7.405"
  std::string why;         ///< what the bound assumes, in words
};

/** @brief One published figure next to moesim's prediction for the same setting. */
struct ValidationRow {
  std::string source;    ///< paper and table/figure, e.g. "FarSkip Table 3"
  std::string scenario;  ///< the setting in words
  std::string metric;    ///< e.g. "overlap_pct", "speedup"
  double published = 0;
  double predicted = 0;
  double tolerance_pct = kDefaultPublishedTolerancePct;  ///< figure rows: |error| allowed
  std::string holds;                                     ///< claim rows: ">", ">=", "<" or "<="; else empty
  std::optional<RowBound> bound = std::nullopt;
  RowStatus status = RowStatus::OFF;
  double error_pct() const { return published != 0 ? 100.0 * (predicted - published) / published : 0.0; }
};

/** @brief The status a row earns by the rules of this file's header. */
RowStatus judge_row(const ValidationRow& row);

/**
 * @brief The rows of one published-figures file, judged with `tolerance_pct` for figure rows that set none;
 * ConfigError naming the file and JSON pointer if malformed.
 */
std::vector<ValidationRow> evaluate_published_file(const std::string& path,
                                                   double tolerance_pct = kDefaultPublishedTolerancePct);

/** @brief Every shipped published file, evaluated in file-name order. */
std::vector<ValidationRow> published_validation(double tolerance_pct = kDefaultPublishedTolerancePct);

}  // namespace moesim::validate
