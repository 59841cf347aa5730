// The `dualpipe` pipeline schedule: DeepSeek-V3's bidirectional pipeline (DeepSeek-V3 report §3.2.1; the
// deepseek-ai/DualPipe README), with overlapped forward-backward chunk pairs and zero-bubble weight passes.
#include "moesim/schedules/Registry.hpp"

namespace moesim::schedules::families {

namespace {
using Kind = PipelineAction::Kind;

/*
 * P ranks, M micro-batches: half of them enter at rank 0 (direction 0: part p on rank p), half at rank
 * P - 1 (direction 1: part p on rank P - 1 - p), so each rank holds two parts (two slots, one per direction)
 * and the model splits into P parts. A rank's "near" direction is the one whose first part it is closer
 * to. With h = min(r, P - 1 - r), H = P / 2 and K = M / 2, rank r runs eight phases:
 *
 *   1  2(H - h - 1) x  F(near)
 *   2  (h + 1)      x  F(near) F(far)
 *   3  (H - h - 1)  x  B(far, W deferred) W F(far)
 *   4  (K - P + h + 1) x  FB(F near, B far) FB(F far, B near)   (the middle ranks split the first pair)
 *   5  (H - h - 1)  x  B(far) FB(F far, B near)
 *   6  (h + 1)      x  B(far) B(near)        (from the middle on, deferring W)
 *   7  (H - h - 1)  x  W B(near, W deferred)
 *   8  (h + 1)      x  W
 *
 * so every rank runs K forward and K backward chunks of each direction; bubble (P/2 - 1)(F&B + B - 3W).
 */
std::vector<PipelineAction> dualpipe_order(const Scenario& s, int rank) {
  const int P = s.parallel.pp, M = s.workload.micro_batches;
  const int H = P / 2, h = std::min(rank, P - 1 - rank), K = M / 2;
  const int near = rank < H ? 0 : 1, far = 1 - near;
  int next_forward[2] = {0, K}, next_backward[2] = {0, K};  // direction 1 runs micro-batches K..M-1
  std::vector<PipelineAction> order;
  auto F = [&](int dir) { order.push_back(PipelineAction::chunk(Kind::FORWARD, dir, next_forward[dir]++)); };
  auto B = [&](int dir, bool defer) {
    order.push_back(PipelineAction::chunk(Kind::BACKWARD, dir, next_backward[dir]++, defer));
  };
  auto W = [&] { order.push_back(PipelineAction::chunk(Kind::WEIGHT)); };
  auto FB = [&](int f, int b) {
    const int forward_micro_batch = next_forward[f]++;
    order.push_back(PipelineAction::pair(f, forward_micro_batch, b, next_backward[b]++));
  };
  if (s.workload.phase != Phase::TRAIN) {
    for (int k = 0; k < K; ++k) {
      F(near);
      F(far);
    }
    return order;
  }
  for (int i = 0; i < 2 * (H - h - 1); ++i) F(near);
  for (int i = 0; i < h + 1; ++i) {
    F(near);
    F(far);
  }
  for (int i = 0; i < H - h - 1; ++i) {
    B(far, true);
    W();
    F(far);
  }
  const bool middle = h == H - 1;
  for (int i = 0; i < K - P + h + 1; ++i) {
    if (i == 0 && middle) {  // DualPipe keeps these two apart to shorten the bubble
      F(near);
      B(far, false);
    } else {
      FB(near, far);
    }
    FB(far, near);
  }
  for (int i = 0; i < H - h - 1; ++i) {
    B(far, false);
    FB(far, near);
  }
  bool defer = false;
  for (int i = 0; i < h + 1; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) defer = true;
    B(far, defer);
    if (i == (h + 1) / 2 && h % 2 == 0) defer = true;
    B(near, defer);
  }
  for (int i = 0; i < H - h - 1; ++i) {
    W();
    B(near, true);
  }
  for (int i = 0; i < h + 1; ++i) W();
  return order;
}

}  // namespace

void pipeline_dualpipe(ScheduleRegistry& registry) {
  PipelineSchedule dualpipe;
  dualpipe.name = "dualpipe";
  dualpipe.help =
      "DeepSeek-V3's DualPipe: micro-batches enter from both ends, each rank holds two parts, and forward "
      "and backward chunks run as overlapped pairs (attention, dispatch, MLP, combine interleaved so each "
      "hides the other's all-to-all); weight gradients fill the bubbles";
  dualpipe.validate = [](const Scenario& s) {
    require_schedule(s.parallel.pp >= 2 && s.parallel.pp % 2 == 0,
                     "--pp-schedule dualpipe needs an even --pp >= 2");
    require_schedule(s.parallel.vpp == 1,
                     "--pp-schedule dualpipe places two parts per rank itself: use --vpp 1");
    require_schedule(s.workload.micro_batches % 2 == 0 && s.workload.micro_batches >= 2 * s.parallel.pp,
                     "--pp-schedule dualpipe needs an even --micro-batches >= 2 x --pp (DualPipe's rule)");
  };
  dualpipe.parts = [](const Scenario& s) { return s.parallel.pp; };
  dualpipe.place = [](const Scenario& s, int micro_batch, int part) {
    const bool second = micro_batch >= s.workload.micro_batches / 2;
    return second ? PipelinePlace{s.parallel.pp - 1 - part, 1} : PipelinePlace{part, 0};
  };
  dualpipe.part_at = [](const Scenario& s, int, int stage, int slot) {
    return slot == 0 ? stage : s.parallel.pp - 1 - stage;
  };
  dualpipe.order = dualpipe_order;
  registry.add(std::move(dualpipe));
}

}  // namespace moesim::schedules::families
