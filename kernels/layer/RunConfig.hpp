#pragma once
/** @file One layer_runner configuration: model, parallelism, sizes, routing, schedules. */
#include <cstdint>
#include <string>
#include <vector>

#include "LayerModel.hpp"
#include "Routing.hpp"
#include "Schedule.hpp"

namespace moesim::kernels::layer {

/** @brief How the iterations of several timed passes are ordered. */
enum class PassOrder {
  INTERLEAVED,  ///< round i runs iteration i of every pass: clock/thermal drift falls on all passes alike
  BLOCKED,      ///< all iterations of a pass, then the next pass (later passes run on a hotter GPU)
};

struct RunConfig {
  std::string model_file;
  LayerModel model;
  MoeComm comm = MoeComm::ALLTOALL;
  int gpus = 1;
  int layers = 4;
  std::int64_t tokens = 8192;  ///< per rank (alltoall) or the replicated batch (allreduce)
  std::int64_t seq = 4096;
  RoutingSpec routing;
  std::uint64_t seed = 1;
  bool sync_splits = true;
  bool check = true;
  bool op_profile = false;  ///< per-step event timing of full and compute-only passes
  std::string attention = "unfused";
  /// one cuBLASLt GEMM per local expert (default), or cuBLAS grouped GEMMs (GroupedExperts.hpp): measured
  /// on H200, cuBLAS 13.0's grouped kernel runs Mixtral's expert GEMMs at half the loop's rate
  bool expert_loop = true;
  std::vector<ScheduleKind> schedules;
  int warmup = 5;
  int iters = 20;
  PassOrder pass_order = PassOrder::INTERLEAVED;

  int tp() const { return comm == MoeComm::ALLREDUCE ? gpus : 1; }
  int experts_per_rank() const { return static_cast<int>(model.experts) / gpus; }
  int top_k() const { return static_cast<int>(model.top_k); }
  const char* phase() const { return comm == MoeComm::ALLREDUCE ? "prefill" : "forward"; }
};

}  // namespace moesim::kernels::layer
