#include "moesim/models/DType.hpp"

#include <gtest/gtest.h>

#include "moesim/common/Error.hpp"

namespace moesim::models {
namespace {

TEST(DType, BytesPerElement) {
  EXPECT_EQ(bytes_per_element(DType::FP32), 4);
  EXPECT_EQ(bytes_per_element(DType::BF16), 2);
  EXPECT_EQ(bytes_per_element(DType::FP16), 2);
  EXPECT_EQ(bytes_per_element(DType::FP8), 1);
}

TEST(DType, ParseIsTheInverseOfToString) {
  for (DType dtype : {DType::FP32, DType::BF16, DType::FP16, DType::FP8}) {
    EXPECT_EQ(parse_dtype(to_string(dtype)), dtype);
  }
  EXPECT_EQ(to_string(DType::BF16), "bf16");
}

TEST(DType, UnknownNameListsTheAcceptedOnes) {
  try {
    parse_dtype("BF16");
    FAIL() << "upper-case dtype accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "<input>: --dtype = \"BF16\": must be one of fp32, bf16, fp16, fp8");
    EXPECT_EQ(e.json_pointer(), "--dtype");
    EXPECT_EQ(e.file(), "");
  }
}

}  // namespace
}  // namespace moesim::models
