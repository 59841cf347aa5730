#pragma once
/** @file Element types of activations and weights, and their sizes. */
#include <string>

namespace moesim::models {

/** @brief Element type in which a workload's GEMMs, activations and messages are computed and moved. */
enum class DType {
  FP32,  ///< IEEE single precision, 4 bytes.
  BF16,  ///< bfloat16, 2 bytes.
  FP16,  ///< IEEE half precision, 2 bytes.
  FP8,   ///< E4M3/E5M2, 1 byte.
};

/** @brief Bytes one element of `dtype` occupies in memory and on the wire. */
int bytes_per_element(DType dtype);

/**
 * @brief Parses the `--dtype` flag: `fp32`, `bf16`, `fp16` or `fp8` (lower case).
 * @throws ConfigError with an empty file and pointer "--dtype" listing the accepted names.
 */
DType parse_dtype(const std::string& text);

/** @brief The flag spelling of `dtype` ("bf16"...), the inverse of parse_dtype(). */
std::string to_string(DType dtype);

}  // namespace moesim::models
