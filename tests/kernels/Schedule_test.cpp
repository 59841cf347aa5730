#include "Schedule.hpp"

#include <gtest/gtest.h>

namespace moesim::kernels::layer {
namespace {

std::string joined(const std::vector<Step>& steps) {
  std::string text;
  for (const Step& s : steps) text += (text.empty() ? "" : " | ") + to_string(s);
  return text;
}

// Layers.cpp alltoall_forward, regular with shared_overlap=off:
//   norm qkv core out | norm gate permute D | routed(D) C | wait C | shared | unpermute residual
TEST(ScheduleTest, RegularAlltoallWaitsForEveryCollectiveRightAway) {
  EXPECT_EQ(
      joined(forward_steps(MoeComm::ALLTOALL, ScheduleKind::REGULAR, 1, true)),
      "L0.ATTN_NORM | L0.ATTN_QKV | L0.ATTN_CORE | L0.ATTN_OUT | L0.RESIDUAL_ADD | L0.MLP_NORM | L0.GATE | "
      "L0.host_sync | L0.PERMUTE | L0.dispatch | wait L0.dispatch | L0.ROUTED_EXPERTS | L0.combine | "
      "wait L0.combine | L0.SHARED_EXPERTS | L0.UNPERMUTE | L0.RESIDUAL_ADD");
}

// §4.1 steps 1–8: Dispatch overlaps core+out, Combine overlaps shared and the next layer's norm+qkv.
TEST(ScheduleTest, FarskipAlltoallDefersCombineToTheNextLayer) {
  EXPECT_EQ(joined(forward_steps(MoeComm::ALLTOALL, ScheduleKind::FARSKIP, 2, false)),
            "L0.ATTN_NORM | L0.ATTN_QKV | L0.MLP_NORM | L0.GATE | L0.PERMUTE | L0.dispatch | L0.ATTN_CORE | "
            "L0.ATTN_OUT | L0.RESIDUAL_ADD | wait L0.dispatch | L0.ROUTED_EXPERTS | L0.combine | "
            "L0.SHARED_EXPERTS | "
            "L1.ATTN_NORM | L1.ATTN_QKV | wait L0.combine | L0.UNPERMUTE | L0.RESIDUAL_ADD | L1.MLP_NORM | "
            "L1.GATE | "
            "L1.PERMUTE | L1.dispatch | L1.ATTN_CORE | L1.ATTN_OUT | L1.RESIDUAL_ADD | wait L1.dispatch | "
            "L1.ROUTED_EXPERTS | L1.combine | L1.SHARED_EXPERTS | wait L1.combine | L1.UNPERMUTE | "
            "L1.RESIDUAL_ADD");
  EXPECT_EQ(joined(forward_steps(MoeComm::ALLTOALL, ScheduleKind::FARSKIP_CE, 2, false)),
            joined(forward_steps(MoeComm::ALLTOALL, ScheduleKind::FARSKIP, 2, false)));
}

TEST(ScheduleTest, AllreduceRegularAndFarskip) {
  EXPECT_EQ(
      joined(forward_steps(MoeComm::ALLREDUCE, ScheduleKind::REGULAR, 1, true)),
      "L0.ATTN_NORM | L0.ATTN_QKV | L0.ATTN_CORE | L0.ATTN_OUT | L0.RESIDUAL_ADD | L0.attn_allreduce | "
      "wait L0.attn_allreduce | L0.MLP_NORM | L0.GATE | L0.PERMUTE | L0.ROUTED_EXPERTS | L0.UNPERMUTE | "
      "L0.SHARED_EXPERTS | L0.moe_allreduce | wait L0.moe_allreduce | L0.RESIDUAL_ADD");
  // §4.2: each all-reduce is waited for only before the next sub-block of its kind.
  const std::string farskip = joined(forward_steps(MoeComm::ALLREDUCE, ScheduleKind::FARSKIP, 2, true));
  EXPECT_EQ(farskip,
            "L0.ATTN_NORM | L0.ATTN_QKV | L0.ATTN_CORE | L0.ATTN_OUT | L0.RESIDUAL_ADD | L0.attn_allreduce | "
            "L0.MLP_NORM | L0.GATE | L0.PERMUTE | L0.ROUTED_EXPERTS | L0.UNPERMUTE | L0.SHARED_EXPERTS | "
            "L0.moe_allreduce | L0.RESIDUAL_ADD | wait L0.attn_allreduce | L1.ATTN_NORM | L1.ATTN_QKV | "
            "L1.ATTN_CORE | L1.ATTN_OUT | L1.RESIDUAL_ADD | L1.attn_allreduce | wait L0.moe_allreduce | "
            "L1.MLP_NORM | L1.GATE | L1.PERMUTE | L1.ROUTED_EXPERTS | L1.UNPERMUTE | L1.SHARED_EXPERTS | "
            "L1.moe_allreduce | L1.RESIDUAL_ADD");
}

TEST(ScheduleTest, CommOnlyKeepsTheRegularCollectivesInOrder) {
  EXPECT_EQ(
      joined(comm_only_steps(MoeComm::ALLTOALL, 2)),
      "L0.dispatch | wait L0.dispatch | L0.combine | wait L0.combine | L1.dispatch | wait L1.dispatch | "
      "L1.combine | wait L1.combine");
}

TEST(ScheduleTest, ParsesNames) {
  EXPECT_EQ(parse_schedules("regular,farskip-ce", MoeComm::ALLTOALL).size(), 2u);
  EXPECT_THROW(parse_schedules("farskip-ce", MoeComm::ALLREDUCE), std::invalid_argument);
  EXPECT_THROW(parse_schedules("regular,regular", MoeComm::ALLTOALL), std::invalid_argument);
  EXPECT_THROW(parse_schedules("fast", MoeComm::ALLTOALL), std::invalid_argument);
  EXPECT_EQ(parse_moe_comm("allreduce"), MoeComm::ALLREDUCE);
  EXPECT_THROW(parse_moe_comm("a2a"), std::invalid_argument);
}

}  // namespace
}  // namespace moesim::kernels::layer
