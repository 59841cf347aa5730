// FoldMoE Algorithm 1 (quick-start time-uniform attention slicing) on hand-worked cases and on the paper's
// models. The hand-worked cases use H = h = 1, so Eq. (5) reads FLOPs(l, c) = 7·l·c + 8·l.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "moesim/common/Error.hpp"
#include "moesim/schedules/TimeUniformSlicing.hpp"

using namespace moesim;
using namespace moesim::schedules;

namespace {
using Slices = std::vector<std::int64_t>;
}  // namespace

TEST(TimeUniformSlicing, FlopsModelIsEquationFive) {
  // (4H + 3h)·l·c + 8H²·l: H = h = 1, l = 2, c = 4 → 7·8 + 8·2 = 72.
  EXPECT_DOUBLE_EQ(attention_slice_flops(2, 4, 1, 1), 72.0);
  // GPT-MoE-M (H = 768, h = 8), one token at position 1: 3096 + 8·768² = 4,721,688.
  EXPECT_DOUBLE_EQ(attention_slice_flops(1, 1, 768, 8), 3096.0 + 8.0 * 768 * 768);
  // t̂ = Σ_{i=1..16} (7i + 8) / 8 = (7·136 + 128) / 8 = 135.
  EXPECT_DOUBLE_EQ(ideal_slice_flops(16, 8, 1, 1), 135.0);
  // The closed form equals the paper's sum on a real model.
  double sum = 0;
  for (std::int64_t i = 1; i <= 4096; ++i) sum += attention_slice_flops(1, i, 1024, 8);
  EXPECT_NEAR(ideal_slice_flops(4096, 4, 1024, 8), sum / 4, 1e-9 * sum);
}

TEST(TimeUniformSlicing, HandWorkedSlicesShrinkAsContextGrows) {
  // L = 16, d = 8, H = h = 1: m = 2, t̂ = 135. Each later end is the first candidate (from the buffer bound
  // (|S|+1)·m up) whose FLOPs(end − start, end) is closest to 135:
  //   start 2,  bound 4:  FLOPs(2,4) = 72,  FLOPs(3,5) = 129, FLOPs(4,6) = 200      → end 5  (slice 3)
  //   start 5,  bound 6:  FLOPs(1,6) = 50,  FLOPs(2,7) = 114, FLOPs(3,8) = 192      → end 7  (slice 2)
  //   start 7,  bound 8:  FLOPs(1,8) = 64,  FLOPs(2,9) = 142, FLOPs(3,10) = 234     → end 9  (slice 2)
  //   start 9,  bound 10: FLOPs(1,10) = 78, FLOPs(2,11) = 170                        → end 11 (slice 2)
  //   start 11, bound 12: FLOPs(1,12) = 92, FLOPs(2,13) = 198                        → end 12 (slice 1)
  //   start 12, bound 14: FLOPs(2,14) = 212, FLOPs(3,15) = 339                       → end 14 (slice 2)
  //   start 14, bound 16: L − 16 = 0 < d − |S| = 1, so no search                    → end 16 (slice 2)
  EXPECT_EQ(time_uniform_slices(16, 8, 1, 1), (Slices{2, 3, 2, 2, 2, 1, 2, 2}));
}

TEST(TimeUniformSlicing, HandWorkedBufferBoundBinds) {
  // L = 12, d = 3: m = 4, t̂ = Σ_{i=1..12} (7i + 8) / 3 = 642 / 3 = 214. The second slice may not end
  // before 2m = 8, and FLOPs(4, 8) = 256 is already past t̂, so it ends at 8; the third must end at 12.
  EXPECT_EQ(time_uniform_slices(12, 3, 1, 1), (Slices{4, 4, 4}));
  // d = 2: the second slice's bound is 2·⌈L/2⌉ >= L, so slicing is always token-uniform.
  EXPECT_EQ(time_uniform_slices(8, 2, 1, 1), (Slices{4, 4}));
  EXPECT_EQ(time_uniform_slices(32768, 2, 768, 8), (Slices{16384, 16384}));
}

TEST(TimeUniformSlicing, HandWorkedUnevenDegreeStillSumsToL) {
  // L = 10, d = 4: m = 3, t̂ = Σ_{i=1..10} (7i + 8) / 4 = 116.25.
  //   start 3, bound 6: FLOPs(3, 6) = 150 >= t̂ at the bound                          → end 6  (slice 3)
  //   start 6, bound 9: L − 9 = 1 < d − |S| = 2, no search                            → end 9  (slice 3)
  //   start 9, bound 12 > L: clamped to L                                              → end 10 (slice 1)
  EXPECT_EQ(time_uniform_slices(10, 4, 1, 1), (Slices{3, 3, 3, 1}));
}

TEST(TimeUniformSlicing, PaperModelsKeepTheConstraints) {
  struct Model {
    std::int64_t hidden, heads;
  };
  for (Model model : {Model{512, 8}, Model{768, 8}, Model{1024, 8}}) {  // GPT-MoE-S/M/L (Table 1)
    for (std::int64_t L : {4096, 8192, 16384, 32768}) {
      for (int d : {2, 4, 8, 16}) {
        const Slices S = time_uniform_slices(L, d, model.hidden, model.heads);
        SCOPED_TRACE("H " + std::to_string(model.hidden) + " L " + std::to_string(L) + " d " +
                     std::to_string(d));
        const std::int64_t m = (L + d - 1) / d;
        EXPECT_EQ(std::accumulate(S.begin(), S.end(), std::int64_t{0}), L);
        EXPECT_EQ(S.front(), m);  // quick start
        EXPECT_LE(S.size(), static_cast<std::size_t>(d));
        const double target = ideal_slice_flops(L, d, model.hidden, model.heads);
        std::int64_t end = 0;
        for (std::size_t j = 0; j < S.size(); ++j) {
          ASSERT_GT(S[j], 0);
          const std::int64_t start = end;
          end += S[j];
          // Token buffer: after j+1 slices at least (j+1)·L/d tokens wait for the MoE layer.
          EXPECT_GE(end * d, static_cast<std::int64_t>(j + 1) * L);
          const std::int64_t bound = std::min<std::int64_t>(L, static_cast<std::int64_t>(j + 1) * m);
          if (j == 0 || end == bound || end == L) continue;
          // A slice the buffer did not pin is the one whose FLOPs are nearest t̂: one token more or less
          // would miss it by at least as much (near-equal FLOPs across slices).
          auto miss = [&](std::int64_t e) {
            return std::abs(attention_slice_flops(e - start, e, model.hidden, model.heads) - target);
          };
          EXPECT_LE(miss(end), miss(end - 1));
          EXPECT_LE(miss(end), miss(end + 1));
        }
      }
    }
  }
}

TEST(TimeUniformSlicing, LongSequencesGetShorterLaterSlices) {
  // GPT-MoE-M at 32K, d = 8: attention per token grows with position (Figure 5), so once the quick-start
  // slice is out, the slices that the buffer does not pin shrink; the last two are pinned to ⌈L/d⌉ by the
  // buffer line and cost more than t̂.
  const Slices S = time_uniform_slices(32768, 8, 768, 8);
  ASSERT_EQ(S.size(), 8u);
  EXPECT_GT(S[1], 4096);
  for (std::size_t j = 2; j < 6; ++j) EXPECT_LT(S[j], S[j - 1]) << j;
  EXPECT_EQ(S[6], 4096);
  EXPECT_EQ(S[7], 4096);
}

TEST(TimeUniformSlicing, RejectsImpossibleInputs) {
  EXPECT_THROW(time_uniform_slices(0, 1, 768, 8), ScheduleError);
  EXPECT_THROW(time_uniform_slices(8, 0, 768, 8), ScheduleError);
  EXPECT_THROW(time_uniform_slices(8, 9, 768, 8), ScheduleError);
  EXPECT_THROW(time_uniform_slices(8, 2, 0, 8), ScheduleError);
}
