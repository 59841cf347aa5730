#pragma once
/**
 * @file A Program is what the engine runs: per-rank ops on in-order streams, issued by each rank's
 * host thread, with cross-stream dependencies (event record/wait) and synchronous collectives.
 *
 * An op runs when three things hold (SimGrid's "dependencies solved" and "assigned"):
 *   1. its host thread has launched it (launches are issued in program order, each costing host time);
 *   2. the op before it on the same stream has finished (streams are in-order queues);
 *   3. every op in `deps` has finished.
 *
 * Device-side ops (FlashMoE-style persistent kernels) skip conditions 1 and 2:
 *   - TRANSFER: a one-sided put from `rank` to `dst_rank` (NVSHMEM/cudaMemcpyPeer); it starts when its
 *     deps finish (deps may be ops of any rank) and becomes a network flow over the platform's links.
 *   - POOL: a persistent kernel, launched once like a kernel, that holds `pool_sms` SMs from its start
 *     until its last task ends and owns `processors` of them as task processors.
 *   - TASK: one tile task of a POOL; it becomes ready when its pool has started and its deps have
 *     finished, waits FIFO for a free processor and then runs for `task_ns`, no host launch and no
 *     stream order involved.
 *
 *   host ──launch──► POOL (P processors + scheduler)
 *                      ready queue (FIFO) ──► processor 0..P-1 ──► TASK done ──► TRANSFER ──► peer's TASK
 */
#include <memory>
#include <string>
#include <vector>

#include "moesim/sim/Types.hpp"

namespace moesim::sim {

/** @brief What an op is. */
enum class OpKind {
  KERNEL,      ///< a GPU kernel that shares the GPU's SMs and HBM with concurrent kernels
  COLLECTIVE,  ///< one member's part of a synchronous collective
  HOST,        ///< host-thread work; blocks the host until its deps finish (e.g. a device→host sync)
  TRANSFER,    ///< a one-sided device-initiated transfer rank → dst_rank (no host launch, no stream)
  POOL,        ///< a persistent kernel that runs TASK ops on its processors
  TASK,        ///< one tile task of a POOL (no host launch, no stream)
};

/**
 * @brief Resource demands of a kernel, measured alone on an idle GPU.
 * Alone it takes fixed_ns + max(compute_ns, memory_ns) (a roofline). Under sharing, compute_ns
 * stretches with lost SMs and the comm slowdown; memory_ns stretches with the HBM share it gets and
 * with memory_comm_slowdown.
 */
struct KernelWork {
  double compute_ns = 0;   ///< time if compute-bound, with sm_fraction of the GPU
  double memory_ns = 0;    ///< time if HBM-bound, with all of the HBM bandwidth
  double fixed_ns = 0;     ///< start-up/tail that no resource speeds up
  double sm_fraction = 1;  ///< share of the GPU's SMs this kernel can fill alone (small grids < 1)
  /// its own factor beyond the lost SMs while comm kernels run; 0 = the platform's compute_slowdown_with_comm
  double comm_slowdown = 0;
  /// what it costs SM-driven collectives: their bus rate divides by this while it runs; 0 = the
  /// platform's comm_slowdown_with_compute (light kernels that share SMs with comm blocks slow them more)
  double comm_drag = 0;
  /// factor on memory_ns while SM-driven collectives run on its GPU, beside what HBM sharing takes (>= 1;
  /// row-wise layer kernels such as RMSNorm are latency-bound below the HBM peak and still slow)
  double memory_comm_slowdown = 1;
  // What the kernel does, for its energy (sim/Power.hpp); the times above already say how long it takes.
  double peak_ns = 0;    ///< its FLOPs at the dtype's dense peak: the tensor work it does, in peak-time
  double hbm_bytes = 0;  ///< HBM bytes it reads plus writes
};

/** @brief An all-to-all's bytes, [i][j] from group[i] to group[j]. */
using PairBytes = std::vector<std::vector<double>>;

/** @brief A collective call: its group and the bytes it moves. Members are added separately. */
struct CollectiveSpec {
  std::string name;
  CollectiveKind kind = CollectiveKind::ALL_TO_ALL;
  std::vector<int> group;  ///< global ranks, in ring order
  PairBytes pair_bytes;    ///< ALL_TO_ALL: [i][j] bytes group[i] → group[j]
  /**
   * ALL_TO_ALL, instead of pair_bytes: a matrix that the collectives moving the same traffic share (every
   * layer's Dispatch repeats one routing), so a program holds one copy of it rather than one per layer.
   */
  std::shared_ptr<const PairBytes> shared_pair_bytes;
  double bytes = 0;  ///< other kinds: per-rank buffer (nccl-tests size)
  Transport transport = Transport::SM_KERNEL;
  /// SM_KERNEL: SMs each member's kernel holds while it runs (DeepEP's normal kernels: 20); 0 = the
  /// platform's GpuResources::comm_sms (NCCL's)
  int sms = 0;
  /** @brief The all-to-all's byte matrix: shared_pair_bytes if set, else pair_bytes. */
  const PairBytes& pairs() const { return shared_pair_bytes ? *shared_pair_bytes : pair_bytes; }
};

/**
 * @brief Where an op sits in the model it was built from: for breakdowns, reports and validation. The
 * engine ignores it; nothing should read meaning from an op's name, which is for people.
 */
struct OpOrigin {
  int layer = -1;         ///< model layer (-1: none)
  bool backward = false;  ///< part of the backward pass
  std::string block;  ///< the schedule's unit it belongs to ("attn_core", "dispatch", "split_sizes_to_host")
  int micro_batch = -1;  ///< micro-batch of a pipelined or accumulated step (-1: the op serves no single one)
};

/** @brief One op of one rank. */
struct Op {
  OpKind kind = OpKind::KERNEL;
  int rank = 0;
  int stream = 0;  ///< index into the rank's streams; ignored for HOST ops (TRANSFER: where traces show it)
  std::string name;
  std::string category;  ///< free text used for breakdowns ("attention", "dispatch", ...)
  OpOrigin origin;
  KernelWork work;
  int collective = -1;     ///< COLLECTIVE: index into Program::collectives()
  double host_ns = 0;      ///< KERNEL/COLLECTIVE: launch cost on the host; HOST: its duration
  std::vector<OpId> deps;  ///< must finish before this op starts
  int dst_rank = -1;       ///< TRANSFER: receiving rank
  double bytes = 0;        ///< TRANSFER: payload
  double latency_ns = 0;   ///< TRANSFER: time before the first byte moves (signal, fabric latency)
  /**
   * TRANSFER: issued by SMs (NVSHMEM puts) or by a copy engine (cudaMemcpyPeerAsync). Either way the rate
   * is set by the links alone: a persistent kernel's stores from all its blocks reach the NVLink port rate
   * (371 GB/s measured at >= 132 blocks, data/calibration/2026-11-21-nvidia-h200-x4/persistent2.log).
   */
  Transport transport = Transport::SM_KERNEL;
  int pool_sms = 0;    ///< POOL: SMs held while it runs
  int processors = 0;  ///< POOL: task processors among them
  OpId pool = NO_OP;   ///< TASK: its POOL
  double task_ns = 0;  ///< TASK: time on one processor
  bool is_comm() const { return kind == OpKind::COLLECTIVE || kind == OpKind::TRANSFER; }
  /** @brief Launched by the host thread (KERNEL, COLLECTIVE, HOST, POOL). */
  bool is_host_launched() const { return kind != OpKind::TRANSFER && kind != OpKind::TASK; }
};

/**
 * @brief Ops of the simulated ranks plus collectives.
 *
 * A full program simulates every rank of the world. A symmetric program simulates rank 0 only and
 * stands for a world where every rank does the same: members of a collective that are not
 * simulated arrive when rank 0's member does, and traffic is modeled from rank 0's side.
 *
 * A mirrored program generalizes that: each rank r has a representative, a simulated rank whose ops it
 * repeats (rank r itself when r is simulated). Pipeline stages differ from each other while the ranks of
 * one stage, and data-parallel replicas, do the same: one representative per stage stands for them.
 * Collective members of mirrored ranks arrive with their representative's member, traffic is modeled
 * from the simulated ranks' side, and a mirrored rank runs on its representative's GPU.
 *
 *   world:  stage 0: 0 1 2 3 | stage 1: 4 5 6 7      representative: 0 0 0 0 | 4 4 4 4
 */
/**
 * @brief Ops one program may hold: the environment's MOESIM_MAX_OPS, else 10,000,000 (about 6 GB at the
 * ~600 bytes an op takes with its run state; docs/limits.md). Adding one more is a ScheduleError, so a
 * scenario too large to simulate is refused while it is built, before its memory is gone.
 */
std::size_t max_program_ops();

/**
 * @brief Refuses (ScheduleError) a program of `ops` ops past max_program_ops(): builders that can count
 * their ops ahead call it before they add any, so a scenario far too large is refused at once.
 */
void check_op_count(double ops);

class Program {
 public:
  /** @brief `world_size` ranks; `symmetric` = simulate rank 0 as the representative of all. */
  Program(int world_size, bool symmetric);
  /**
   * @brief A mirrored program: rank r repeats `representative[r]`, which must represent itself (ScheduleError
   * for a size other than world_size or a representative that is not simulated).
   */
  Program(int world_size, std::vector<int> representative);

  int world_size() const { return world_size_; }
  /** @brief Some rank is not simulated but mirrors a representative (the symmetric fast path included). */
  bool is_symmetric() const { return symmetric_; }
  /** @brief The simulated rank whose ops `rank` repeats (itself when simulated). */
  int representative(int rank) const { return representative_.at(static_cast<std::size_t>(rank)); }
  /** @brief Ranks that have ops (all ranks, or {0} when symmetric). */
  const std::vector<int>& simulated_ranks() const { return simulated_ranks_; }
  bool is_simulated(int rank) const;

  /** @brief Declares the streams of a simulated rank (e.g. {"compute", "comm"}); returns nothing. */
  void set_streams(int rank, std::vector<std::string> names);
  const std::vector<std::string>& streams(int rank) const;

  OpId add_kernel(int rank, int stream, std::string name, std::string category, const KernelWork& work,
                  double launch_ns, std::vector<OpId> deps = {}, OpOrigin origin = {});
  int add_collective(CollectiveSpec spec);
  OpId add_collective_member(int collective, int rank, int stream, std::string category, double launch_ns,
                             std::vector<OpId> deps = {}, OpOrigin origin = {});
  OpId add_host_op(int rank, std::string name, std::string category, double host_ns,
                   std::vector<OpId> deps = {}, OpOrigin origin = {});
  /**
   * @brief A one-sided transfer of `bytes` from `src` to `dst` (both simulated: full programs only),
   * starting when `deps` (ops of any rank) finish, plus `latency_ns`. src == dst moves nothing.
   */
  OpId add_transfer(int src, int dst, std::string name, std::string category, double bytes,
                    Transport transport, double latency_ns, std::vector<OpId> deps = {}, OpOrigin origin = {},
                    int display_stream = 0);
  /**
   * @brief A persistent kernel on `stream` that holds `sms` SMs while it runs and executes its tasks
   * on `processors` (<= sms) of them. It ends when its last task ends (at once if it has none).
   */
  OpId add_pool(int rank, int stream, std::string name, std::string category, int sms, int processors,
                double launch_ns, std::vector<OpId> deps = {}, OpOrigin origin = {});
  /** @brief A tile task of `pool` taking one processor for `duration_ns` once `deps` have finished. */
  OpId add_task(OpId pool, std::string name, std::string category, double duration_ns,
                std::vector<OpId> deps = {}, OpOrigin origin = {});
  /** @brief Adds a dependency after the fact (e.g. to wire a later layer to an earlier handle). */
  void add_dependency(OpId op, OpId must_finish_first);

  const std::vector<Op>& ops() const { return ops_; }
  const Op& op(OpId id) const { return ops_.at(static_cast<std::size_t>(id)); }
  const std::vector<CollectiveSpec>& collectives() const { return collectives_; }
  /** @brief Member ops of collective `c`, one per simulated member rank. */
  const std::vector<OpId>& members(int c) const { return members_.at(static_cast<std::size_t>(c)); }
  /** @brief Position of `rank` in collective `c`'s group, or -1 if it is not a member. */
  int group_index(int c, int rank) const;

  /** @brief Throws ScheduleError for malformed input (bad rank/stream/dep, incomplete collective). */
  void validate() const;

 private:
  OpId push(Op op);
  void check_rank(int rank) const;

  int world_size_;
  bool symmetric_;
  std::size_t max_ops_;
  std::vector<int> representative_;  ///< per world rank
  std::vector<int> simulated_ranks_;
  std::vector<std::vector<std::string>> streams_;  ///< per world rank (empty when not simulated)
  std::vector<Op> ops_;
  std::vector<CollectiveSpec> collectives_;
  std::vector<std::vector<OpId>> members_;
  std::vector<std::vector<std::pair<int, int>>> group_index_;  ///< per collective: (rank, index), by rank
};

}  // namespace moesim::sim
