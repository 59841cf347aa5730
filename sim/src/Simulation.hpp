#pragma once
/** @file Internal state of one engine run; split across Engine.cpp (op lifecycle) and Sharing.cpp (rates). */
#include <cmath>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "FlowQueue.hpp"
#include "MaxMinSystem.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/NumberText.hpp"
#include "moesim/sim/Engine.hpp"
#include "moesim/sim/Platform.hpp"
#include "moesim/sim/Program.hpp"
#include "moesim/sim/RunResult.hpp"

namespace moesim::sim::detail {

/** The last simulated instant (2^61 ns, 73 years): later event times could overflow TimeNs. */
inline constexpr TimeNs kLastNs = TimeNs{1} << 61;

/** Thrown for a duration or an event time past kLastNs: a rate near 0 or a work near infinity in the input.
 */
[[noreturn]] inline void beyond_time_limit(double ns) {
  throw ScheduleError("an op of the scenario would take " + format_number(ns * 1e-9) +
                      " s, past the 73 years the engine simulates: a rate near 0 or a size far too large in "
                      "the scenario or the hardware profile");
}

class SimGridNetwork;

/** Durations become whole nanoseconds, rounded up; a sub-picosecond excess is float noise, not time. */
inline TimeNs ceil_ns(double ns) {
  if (!(ns < static_cast<double>(kLastNs))) beyond_time_limit(ns);  // also NaN
  return ns <= 0 ? 0 : static_cast<TimeNs>(std::ceil(ns - 1e-6));
}

enum class EventType {
  HOST_DONE,
  KERNEL_FIXED_DONE,
  KERNEL_DONE,
  LATENCY_DONE,
  FLOW_DONE,
  TASK_DONE,
  TRANSFER_START,
  RANK_START
};

/** Same-time events apply in this class order, then in creation order. */
inline int event_class(EventType t) {
  switch (t) {
    case EventType::KERNEL_DONE:
    case EventType::FLOW_DONE:
    case EventType::TASK_DONE:
      return 0;
    case EventType::KERNEL_FIXED_DONE:
    case EventType::LATENCY_DONE:
    case EventType::TRANSFER_START:
      return 1;
    case EventType::HOST_DONE:
    case EventType::RANK_START:
      return 2;
  }
  return 3;
}

struct Event {
  TimeNs time;
  int cls;
  std::uint64_t seq;
  EventType type;
  int target;
  std::uint64_t version;
  bool operator>(const Event& o) const { return std::tie(time, cls, seq) > std::tie(o.time, o.cls, o.seq); }
};

/** A fluid activity: a kernel (work 1.0) or a flow (bytes). */
struct Fluid {
  double remaining = 0;
  double rate = 0;  ///< per ns
  TimeNs last = 0;
  std::uint64_t version = 0;
  bool done = false;
};

/**
 * Data in flight for a collective. An all-to-all has one flow per ordered pair; a ring collective is a
 * single lockstep flow across every hop (a pipelined ring moves at the pace of its slowest hop). Indexed
 * by its id in the network's MaxMinSystem, which holds the links and ports it crosses.
 */
struct Flow : Fluid {
  int collective = -1;
  OpId transfer = NO_OP;  ///< a one-sided TRANSFER op instead of a collective
  int sender = -1;        ///< pairwise flows: group indices whose member ops wait for it
  int receiver = -1;
  bool whole_ring = false;  ///< a ring: every member waits for it, and it crosses every hop
};

struct CollectiveState {
  int expected = 0;
  int arrived = 0;
  bool flowing = false;
  CollectiveCost cost;
  std::vector<int> outstanding;  ///< per group index: unfinished flows touching that member
  std::vector<OpId> member_at;   ///< per group index: simulated member op or NO_OP
  /// Its ports in the network, while its data moves: SM-driven, egress of member i at i and ingress at
  /// n + i; copy engines, one port per member for both directions.
  std::vector<int> ports;
  int grid_flows = 0;  ///< SimGrid: its comms still moving (symmetric runs move non-simulated members' too)
};

struct HostState {
  std::vector<OpId> queue;
  std::size_t next = 0;
  bool busy = false;
  bool blocked = false;
};

/** An SM-driven collective member that reached its stream while kernels filled the GPU. */
struct AwaitingSms {
  OpId member = NO_OP;
  std::vector<OpId> ahead;  ///< the kernels running when it arrived; later ones do not delay it
};

struct GpuState {
  std::vector<OpId> fluid_kernels;  ///< kernels in their fluid phase, sorted by id
  std::vector<OpId> running;        ///< compute kernels started and not finished, in start order
  std::vector<AwaitingSms> awaiting_sms;
  /// (collective, group index) of SM-driven collective members whose port rates this GPU sets
  std::vector<std::pair<int, int>> comm_ports;
  int comm_kernels = 0;      ///< SM-driven collective members holding SMs
  double comm_sms = 0;       ///< the SMs they hold together
  int copy_collectives = 0;  ///< copy-engine collective members in flight (no SMs, but HBM traffic)
  int pool_sms = 0;          ///< SMs held by running persistent kernels
  std::vector<int> flowing;  ///< collectives whose member on this GPU is moving data (HBM traffic)
  /// Per flowing SM-driven collective: the bus bandwidth (bytes/s) its HBM share allows; absent = no limit.
  std::vector<std::pair<int, double>> comm_bus_cap;
  bool dirty = false;          ///< its kernels' rates need recomputing
  bool ports_changed = false;  ///< the port rates of its comm_ports need recomputing
};

/** A running persistent kernel: free processors and the FIFO of ready tasks. */
struct PoolState {
  bool started = false;
  int free = 0;
  int remaining = 0;        ///< tasks not yet finished
  std::vector<OpId> tasks;  ///< in id order
  std::vector<OpId> ready;  ///< FIFO (head at ready_head)
  std::size_t ready_head = 0;
};

/**
 * How the network's MaxMinSystem solves, from the MOESIM_MAXMIN environment variable: `incremental` (the
 * default), `from-scratch` (a full max-min solve per change, the reference) or `checked` (incremental, each
 * solve compared bit for bit with the full one; InternalError on a difference). ConfigError otherwise.
 */
MaxMinSystem::Mode max_min_mode();

/** The SimGrid backend's run (sim/src/simgrid/SimGridRun.cpp); one at a time per process. */
RunResult run_on_simgrid(const Platform& platform, const Program& program, const JitterSpec& jitter);

class Simulation {
 public:
  /**
   * `grid` null: the analytic engine (max-min shares solved here). Otherwise flows are SimGrid comms on
   * `grid`, run() must be called from a SimGrid actor, and a symmetric program's collectives move every
   * member's data (rank 0's kernels stand for each rank's, the network sees all of the traffic).
   */
  Simulation(const Platform& platform, const Program& program, const JitterSpec& jitter = {},
             SimGridNetwork* grid = nullptr);
  RunResult run();

 private:
  void run_analytic();
  void run_on_grid();
  void handle_events_at_now();
  void settle_step();
  void schedule(TimeNs at, EventType type, int target, std::uint64_t version = 0);
  void handle(const Event& e);
  void advance_host(int rank);
  void host_done(int rank);
  void try_start(OpId id);
  void start_kernel(OpId id);
  void begin_fluid(OpId id);
  void arrive(OpId id);
  bool sms_free_for_comm(const GpuState& gpu, const std::vector<OpId>& ahead, double needed) const;
  /** @brief SMs a member of SM-driven collective `spec` holds. */
  double sms_of(const CollectiveSpec& spec) const;
  void kernel_left_gpu(OpId id);
  void join_collective(OpId id);
  void begin_flows(int c);
  void start_analytic_flows(int c);
  void hold_members(CollectiveState& st, const Flow& f);
  int add_flow(Flow flow, double bytes, const std::vector<int>& resources);
  /** SimGrid: a flow from GPU src to dst through ports (-1: none), as a comm. */
  int add_grid_flow(Flow flow, double bytes, int src, int src_port, int dst, int dst_port);
  void begin_grid_flows(int c);
  void open_ports(int c);
  void close_ports(int c);
  void update_member_ports(int c, int member);
  void finish_flow(int f);
  void finish_member(OpId id);
  void close_ports_when_idle(int c);
  void finish_op(OpId id);
  void recompute_gpu(int rank);
  void recompute_network();
  void add_link_resources();
  std::vector<double> share_hbm(int rank, const std::vector<double>& granted,
                                const std::vector<double>& hbm_need);
  double comm_bus_cap(int gpu, int collective) const;
  /** @brief An SM-driven collective's port rate on a GPU: its table rate, lower while compute runs there. */
  double sm_comm_port(int gpu, double bus) const;
  void set_rate(Fluid& fluid, double rate, EventType type, int target);
  void set_flow_rate(int f, double rate);
  void mark_dirty(int gpu);
  void mark_ports_changed(int gpu);
  bool flow_event_first() const;
  int gpu_of(int rank) const { return program_.representative(rank); }
  void check_all_ran() const;
  void try_start_device(OpId id);
  void start_pool(OpId id);
  void dispatch_tasks(PoolState& pool);
  void finish_task(OpId id);
  void begin_transfer(OpId id);

  const Platform& platform_;
  const Program& program_;
  SimGridNetwork* grid_;            ///< null: the analytic network
  std::vector<int> free_grid_ids_;  ///< SimGrid: finished flow ids to reuse
  const std::vector<Op>& ops_;
  std::vector<OpTiming> timing_;
  std::vector<int> deps_left_;
  std::vector<TimeNs> deps_time_;
  std::vector<OpId> deps_last_;
  std::vector<OpId> stream_prev_, stream_next_, host_prev_;
  std::vector<std::size_t> dependents_begin_;  ///< per op: where its dependents start in dependents_
  std::vector<OpId> dependents_;
  std::vector<int> kernel_slot_;  ///< per op: its Fluid in fluids_ while a kernel's fluid phase runs, else -1
  std::vector<Fluid> fluids_;
  std::vector<int> free_fluids_;
  std::vector<Flow> flows_;  ///< by MaxMinSystem flow id
  MaxMinSystem network_;
  std::vector<int> link_resource_;        ///< per platform link
  std::vector<int> whole_link_resource_;  ///< symmetric runs: per link, at full capacity, for rings
  std::uint64_t port_blocks_ = 0;         ///< collectives that opened ports so far (orders their ports)
  std::vector<int> opened_ports_;         ///< collectives whose ports opened since the last recompute
  int live_flows_ = 0;
  FlowQueue flow_events_;
  /// Sequence number that every pending flow completion carries: the engine re-solves the network after
  /// the other changes of a time step, so its flow events order after those, in flow creation order.
  std::uint64_t network_seq_ = 0;
  std::vector<int> dirty_gpus_;
  std::vector<int> ports_changed_gpus_;
  std::vector<CollectiveState> collectives_;
  std::vector<HostState> hosts_;
  std::vector<GpuState> gpus_;
  std::vector<PoolState> pools_;
  std::vector<int> pool_index_;        ///< per op: its PoolState (POOL and TASK ops), else -1
  std::vector<double> extra_host_ns_;  ///< per op: launch jitter (empty without OP_LAUNCH jitter)
  std::vector<double> rank_start_ns_;  ///< per rank: start jitter
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
  std::uint64_t processed_ = 0;
  TimeNs now_ = 0;
  bool network_dirty_ = false;
};

}  // namespace moesim::sim::detail
