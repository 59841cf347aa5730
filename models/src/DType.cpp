#include "moesim/models/DType.hpp"

#include <array>
#include <utility>

#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::models {
namespace {

constexpr std::array<std::pair<DType, const char*>, 4> kDTypeNames = {{
    {DType::FP32, "fp32"},
    {DType::BF16, "bf16"},
    {DType::FP16, "fp16"},
    {DType::FP8, "fp8"},
}};

}  // namespace

int bytes_per_element(DType dtype) {
  switch (dtype) {
    case DType::FP32:
      return 4;
    case DType::BF16:
    case DType::FP16:
      return 2;
    case DType::FP8:
      return 1;
  }
  MOE_CHECK(false) << "unknown DType " << static_cast<int>(dtype);
  return 0;
}

DType parse_dtype(const std::string& text) {
  for (const auto& [dtype, name] : kDTypeNames) {
    if (text == name) return dtype;
  }
  throw ConfigError("", "--dtype", "= \"" + text + "\": must be one of fp32, bf16, fp16, fp8");
}

std::string to_string(DType dtype) {
  for (const auto& [candidate, name] : kDTypeNames) {
    if (candidate == dtype) return name;
  }
  MOE_CHECK(false) << "unknown DType " << static_cast<int>(dtype);
  return {};
}

}  // namespace moesim::models
