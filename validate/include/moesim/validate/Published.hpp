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
 *   {"min": [a, b, ...]}  {"max": [...]}         of the listed expressions
 *   {"min": {"over": [{flags}, ...], "of": e}}   e evaluated once per flag set, the smallest (or "max")
 *   {"formula": "name", "args": {...}}           a closed form the model defines (no simulation)
 *
 * Metrics: step_ms, layer_ms, overlap_pct, tokens_per_s, sm_util_pct, mfu_pct, forward_overlap_pct and
 * backward_overlap_pct (overlap of one pass of a training step, rank 0). Formulas:
 * flashmoe_symmetric_tensor_gib (FlashMoE §3.2; args tokens, experts, hidden, element_bytes, tile_m).
 * Simulations are shared between rows of one file: each distinct flag set runs once.
 */
#include <string>
#include <vector>

namespace moesim::validate {

/** @brief One published figure next to moesim's prediction for the same setting. */
struct ValidationRow {
  std::string source;    ///< paper and table/figure, e.g. "FarSkip Table 3"
  std::string scenario;  ///< the setting in words
  std::string metric;    ///< e.g. "overlap_pct", "speedup"
  double published = 0;
  double predicted = 0;
  double error_pct() const { return published != 0 ? 100.0 * (predicted - published) / published : 0.0; }
};

/** @brief The rows of one published-figures file; ConfigError naming the file and JSON pointer if malformed.
 */
std::vector<ValidationRow> evaluate_published_file(const std::string& path);

/** @brief Every shipped published file, evaluated in file-name order. */
std::vector<ValidationRow> published_validation();

}  // namespace moesim::validate
