#pragma once
/**
 * @file One rank's launches: the kernels of each layer op, the collectives and the waits, driven
 * by a Schedule.hpp step list.
 *
 * Data flow (why each op reads what it reads). alltoall, FarSkip paper §3:
 *   regular   X → attn; P = X + attn; M = unpermute(routed) + shared(norm P); X' = P + M
 *   farskip   attention input  P_l + S_{l-1}          (= o_{l-2} + attn_{l-1} + shared_{l-1})
 *             MoE input        X_l = P_l + M_{l-1}     (= o_{l-1}, without attn_l)
 *             P_{l+1} = X_l + attn_l; the shared output joins the attention input through the
 *             fused add of the next ATTN_NORM, and the MoE output through UNPERMUTE + RESIDUAL_ADD.
 * allreduce (TP = EP = G, every rank holds the batch; partial sums are reduced):
 *   regular   A: H = Σ_ranks(attn_partial + X/G); M: R = Σ_ranks(routed_local + shared_slice);
 *             X' = H + R
 *   farskip   P'_{l+1} = Σ(attn_partial + P'_l/G) (attention chain, A_l waited for before l+1);
 *             Acc = Σ_{j<l} R_j (the MOE residual folds in R_{l-1} once M_{l-1} was waited for);
 *             attention input P'_l + Acc (without R_{l-1}), MoE input P'_l + Acc + R_{l-1}
 *             (without attn_l) — each all-reduce waited for only before the next sub-block of
 *             its kind, as Layers.cpp's allreduce_forward. P' and R are double-buffered by layer
 *             parity because the next layer writes while the previous all-reduce is in flight.
 */
#include <array>
#include <map>
#include <memory>

#include "GroupedExperts.hpp"
#include "RankState.hpp"
#include "Transport.hpp"

namespace moesim::kernels::layer {

/** @brief What a pass runs: the full layer, no collectives (stand-in copies), or collectives only. */
enum class PassMode { FULL, COMPUTE_ONLY, COMM_ONLY };

class RankRunner {
 public:
  RankRunner(const RunConfig& config, World& world, int rank);

  /** @brief Sets the schedule of the following steps (buffers and transport depend on it). */
  void configure(ScheduleKind kind, PassMode mode);
  /** @brief Identity experts and no shared output: the data-path check. */
  void set_identity_experts(bool identity) { identity_ = identity; }

  void execute(const Step& step);
  /** @brief The compute stream waits for everything issued on the comm stream. */
  void join();

  RankState& state() { return state_; }
  /**
   * @brief Runs layer 0's experts on random rows both ways (grouped and one GEMM per expert) and returns
   * the first output that differs beyond bf16 rounding, "" when all agree or the experts run as a loop.
   */
  std::string compare_grouped_with_loop();
  /** @brief The buffers holding the stack's output after a full pass (to scan for NaN/Inf). */
  std::vector<const DeviceBuffer*> final_outputs() const;

 private:
  void compute(int layer, Op op);
  void attention_ops(int layer, Op op);
  void moe_ops(int layer, Op op);
  void routed_experts(int layer);
  /** @brief expert_in → expert_out through each local expert's MLP: per-expert GEMMs or grouped GEMMs. */
  void expert_mlps(int layer, bool loop);
  void shared_experts(int layer);
  void residual(int layer, Op op);
  void collective(int layer, Comm comm);
  void host_sync();
  void gemm(const bf16_t* a, const bf16_t* w, bf16_t* y, std::int64_t m, std::int64_t n, std::int64_t k);

  bool farskip() const { return kind_ != ScheduleKind::REGULAR; }
  bool allreduce() const { return config_.comm == MoeComm::ALLREDUCE; }
  std::size_t slot(int layer) const {
    return kind_ == ScheduleKind::FARSKIP_CE ? static_cast<std::size_t>(layer) : 0;
  }
  bf16_t* attention_stream(int layer) const;   ///< allreduce: P'_l (farskip) or X (regular)
  bf16_t* attention_reduced(int layer) const;  ///< allreduce: where attention's all-reduce lands
  bf16_t* moe_reduced(int layer) const;        ///< allreduce: where the MoE all-reduce lands
  std::size_t th() const { return static_cast<std::size_t>(state_.shape.tokens * state_.shape.hidden); }

  const RunConfig& config_;
  World& world_;
  int rank_;
  RankState& state_;
  ScheduleKind kind_ = ScheduleKind::REGULAR;
  PassMode mode_ = PassMode::FULL;
  bool identity_ = false;
  std::map<std::array<std::int64_t, 3>, std::unique_ptr<LtMatmul>> gemms_;
  std::unique_ptr<GroupedExperts> grouped_;  ///< null with --experts loop
};

}  // namespace moesim::kernels::layer
