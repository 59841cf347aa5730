#pragma once
/** @file Shared plumbing of the FlashMoE family: routed rows per (source rank, expert), options, builders. */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "moesim/schedules/Registry.hpp"
#include "moesim/schedules/Scenario.hpp"
#include "moesim/schedules/Simulation.hpp"
#include "moesim/sim/Program.hpp"

namespace moesim::schedules::detail {

using sim::NO_OP;
using sim::OpId;

/** @brief Who sends how many rows to which expert, for one MoE layer. */
struct FlashPlan {
  int ep = 1, experts = 1, local = 1, top_k = 1;
  std::int64_t tokens = 0, hidden = 0, ffn = 0;
  int element = 2;                                ///< bytes per activation element (the scenario dtype)
  bool padded = false;                            ///< rows padded to each source's expert capacity
  std::vector<std::vector<std::int64_t>> rows;    ///< [src][expert] rows sent (and computed)
  std::vector<std::vector<std::int64_t>> routed;  ///< [src][expert] rows actually routed
  bool symmetric = false;                         ///< every rank sends and receives the same
  int owner(int expert) const { return expert / local; }
  /** Rows rank `dst` receives for its local expert `e` (global id) from `src`. */
  std::int64_t rows_to(int src, int expert) const {
    return rows[static_cast<std::size_t>(src)][static_cast<std::size_t>(expert)];
  }
  /** Bytes of all Dispatch traffic that crosses the network (src != owner), summed over ranks. */
  double network_bytes() const;
  /** Same, had every source sent only its routed rows / rows padded to capacity. */
  double routed_network_bytes() const;
  double padded_network_bytes() const;
  std::int64_t capacity_per_source = 0;  ///< ceil(cf·T·k/E); 0 without a capacity factor
};

/** @brief Routes the scenario (seeded) and pads when `padded` (needs a capacity factor > 0). */
FlashPlan plan_flash(const Scenario& s, bool padded);

/** @brief An integer `--opt key=N` in [lo, hi], or `fallback`; ConfigError naming the option. */
int option_int(const Scenario& s, const std::string& key, int fallback, int lo, int hi);
/** @brief `--opt key=V` among `choices` (first is the default); ConfigError listing them. */
std::string option_choice(const Scenario& s, const std::string& key, const std::vector<std::string>& choices);
/** @brief What a FlashMoE-family builder produced beside its program. */
struct FlashBuilt {
  std::shared_ptr<sim::Program> program;
  double flops_rank0 = 0;
  int kernels_per_rank = 0;           ///< host-launched GPU ops of rank 0
  double symmetric_tensor_bytes = 0;  ///< the megakernel's symmetric tensor L per GPU (0 for baselines)
};

/**
 * @brief The family's result: one MoE layer of s.parallel.ep ranks, with the "flashmoe" figure group
 * (GPU ops per rank, Dispatch bytes as sent / payload-efficient / padded, symmetric tensor).
 */
BuiltProgram flash_result(const Scenario& s, const FlashPlan& plan, FlashBuilt built);

/** @brief The family's rules: one MoE layer's forward pass, all-to-all MoE, no attention TP. */
void validate_flash(const Scenario& s);

/** @brief The family's summary line, from its figure group and the run's SM utilisation. */
std::vector<FigureGroup> flash_summary(const SimulationResult& r);

/** @brief Why the power cap does not apply to the family's programs. */
inline const char* const kFlashPowerNotModeled = "persistent-kernel tasks carry no FLOP count";

}  // namespace moesim::schedules::detail
