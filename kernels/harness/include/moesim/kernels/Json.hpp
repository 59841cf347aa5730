#pragma once
/**
 * @file JSON of result files and model files: nlohmann's ordered_json, as the host code uses.
 *
 * Ordered, so objects keep their insertion order and result files stay stable and diffable.
 * Non-finite numbers are written as null (JSON has no NaN or Inf).
 */
#include <nlohmann/json.hpp>

namespace moesim::kernels {

using Json = nlohmann::ordered_json;

}  // namespace moesim::kernels
