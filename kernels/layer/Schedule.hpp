#pragma once
/**
 * @file The per-rank op order of an L-layer forward, as a list of steps the GPU runner walks.
 *
 * This mirrors schedules/src/Layers.cpp (alltoall_forward, allreduce_forward) op for op, so that
 * the simulator and the runner describe the same program:
 *   COMPUTE     launch the op's kernels on the compute stream;
 *   COLLECTIVE  record an event on the compute stream, make the comm stream wait for it, launch the
 *               collective there and record its done event (the simulator's implicit dependency of
 *               a collective on the last compute kernel);
 *   WAIT        the compute stream waits for that collective's done event;
 *   HOST_SYNC   Megatron's split-size copy: per-expert counts device→host, host waits for compute.
 * At the end the compute stream joins the comm stream (collectives still in flight are exposed).
 */
#include <string>
#include <vector>

namespace moesim::kernels::layer {

enum class MoeComm { ALLTOALL, ALLREDUCE };
enum class ScheduleKind { REGULAR, FARSKIP, FARSKIP_CE };

/** @brief "regular", "farskip", "farskip-ce". */
std::string to_string(ScheduleKind kind);
/** @brief Parses a comma-separated list; farskip-ce is refused in allreduce mode. @throws
 * std::invalid_argument */
std::vector<ScheduleKind> parse_schedules(const std::string& text, MoeComm comm);
/** @brief "alltoall" or "allreduce". @throws std::invalid_argument */
MoeComm parse_moe_comm(const std::string& text);

/** @brief Sub-block ops (the simulator's LayerOp), with the two residual adds told apart. */
enum class Op {
  ATTN_NORM,
  ATTN_QKV,
  ATTN_CORE,
  ATTN_OUT,
  ATTN_RESIDUAL,  ///< RESIDUAL_ADD after attention
  MLP_NORM,
  GATE,
  PERMUTE,
  ROUTED_EXPERTS,
  SHARED_EXPERTS,
  UNPERMUTE,
  MOE_RESIDUAL,  ///< RESIDUAL_ADD after the MoE block
};

enum class Comm { DISPATCH, COMBINE, ATTN_ALLREDUCE, MOE_ALLREDUCE };

/** @brief The simulator's names: "ATTN_NORM", ..., both residuals "RESIDUAL_ADD". */
std::string to_string(Op op);
/** @brief "dispatch", "combine", "attn_allreduce", "moe_allreduce". */
std::string to_string(Comm comm);

enum class StepKind { COMPUTE, COLLECTIVE, WAIT, HOST_SYNC };

struct Step {
  StepKind kind = StepKind::COMPUTE;
  int layer = 0;
  Op op = Op::ATTN_NORM;       ///< COMPUTE
  Comm comm = Comm::DISPATCH;  ///< COLLECTIVE and WAIT
};

/** @brief "L0.ATTN_NORM", "L0.dispatch", "wait L0.dispatch", "L0.host_sync". */
std::string to_string(const Step& step);

/**
 * @brief Steps of one forward over `layers` layers. farskip-ce has farskip's order (only the
 * transport differs). The regular schedule is Layers.cpp's with shared_overlap=off: Combine is
 * waited for before the shared experts, so no collective overlaps anything.
 */
std::vector<Step> forward_steps(MoeComm comm, ScheduleKind kind, int layers, bool sync_splits);

/** @brief Comm-only program: the collectives of forward_steps(regular) in order, each waited for. */
std::vector<Step> comm_only_steps(MoeComm comm, int layers);

}  // namespace moesim::kernels::layer
