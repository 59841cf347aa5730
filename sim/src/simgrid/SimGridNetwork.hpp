#pragma once
/**
 * @file The SimGrid side of `--engine simgrid`: a SimGrid platform built from a sim::Platform, and the
 * flows of a run as SimGrid comms on it. Only sim/src/simgrid/ sees SimGrid's types.
 *
 *   node zone (full routing)                           root zone (full routing, nodes > 1)
 *   GPU g: direct host ─────────── egress(g) ─┐        node gateway ─uplink─► switch ─downlink─► gateway
 *          port host k ─port_out(g,k)─ egress(g) ─► ingress(h) ─ port_in(h,k')─ port host of GPU h
 *          (k: one per collective in flight on g)      NIC out/in between a GPU's port and its gateway
 *
 * A collective's ports (its bus-bandwidth limit per member, set by the shared engine code as kernels come
 * and go) become links of their own: each member of a collective in flight holds one port host of its
 * GPU, and the collective's comms leave and enter through those hosts, so concurrent collectives meet
 * on the physical links only, as in the analytic engine.
 */
#include <cstdint>
#include <memory>
#include <vector>

#include "moesim/sim/Platform.hpp"
#include "moesim/sim/Types.hpp"

namespace moesim::sim::detail {

/** @brief How a collective member's port is wired (each kind has its own port hosts per GPU). */
enum class PortKind {
  PAIRWISE,  ///< SM-driven all-to-all: pair routes (a mesh's GPU-pair link)
  RING,      ///< SM-driven ring collective: striped over all of a GPU's fabric links
  COPY,      ///< copy engines: one budget for both directions
};

class SimGridNetwork {
 public:
  /** @brief Builds the SimGrid platform of `platform`; a SimGrid Engine must exist and not yet run. */
  explicit SimGridNetwork(const Platform& platform);
  ~SimGridNetwork();
  SimGridNetwork(const SimGridNetwork&) = delete;
  SimGridNetwork& operator=(const SimGridNetwork&) = delete;

  /** @brief A free port of `kind` on `gpu` (ScheduleError when all kPortsPerGpu are taken). */
  int acquire_port(int gpu, PortKind kind);
  void release_port(int port);
  /** @brief The port's capacity (bytes/s) from now on. */
  void set_port_rate(int port, double bytes_per_s);

  /** @brief Starts flow `id`: `bytes` from GPU `src` to GPU `dst`, through their ports (-1: none). */
  void start_flow(int id, int src, int src_port, int dst, int dst_port, double bytes);
  int live_flows() const;

  /**
   * @brief Lets SimGrid run until a flow completes or simulated time reaches `until_ns` (< 0: no limit).
   * Returns the time reached (ns since the run began, rounded up as the analytic engine rounds) and
   * fills `done` with the flows that completed then, in the order SimGrid completed them.
   */
  TimeNs advance(TimeNs until_ns, std::vector<int>& done);

  /** @brief Ports one GPU offers per kind: collectives of that kind a GPU may have in flight at once. */
  static constexpr int kPortsPerGpu = 6;

 private:
  struct Impl;
  friend void listen_for_finished_comms();
  std::unique_ptr<Impl> impl_;
};

}  // namespace moesim::sim::detail
