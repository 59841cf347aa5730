#pragma once
/**
 * @file How a collective moves bytes, and the host barrier the copy-engine path needs.
 *
 *   NCCL         all-to-all = ncclGroupStart; ncclSend/ncclRecv per peer with the per-pair row
 *                counts; ncclGroupEnd. All-reduce = ncclAllReduce(bf16, sum) in place.
 *   COPY_ENGINE  per (src, dst) pair one cudaMemcpyPeerAsync from the sender's send buffer into
 *                the receiver's receive buffer (a distinct buffer per layer and collective, so only
 *                "data sent" must be signalled). The sender records `sent` after its copies; all
 *                ranks meet at a spin barrier; then each receiver's comm stream waits for every
 *                sender's `sent`. The barrier is needed because waiting on an event that has not
 *                been recorded yet is a no-op; it costs one host rendezvous per collective (a few
 *                µs of host time per layer, hidden while the GPU is busy).
 *   LOCAL_COPY   compute-only: a cudaMemcpyAsync of the bytes this rank would receive, on the
 *                same stream with the same events, so the expert GEMMs see the same row counts.
 */
#include <atomic>
#include <stdexcept>
#include <vector>

#include "RankState.hpp"

#include "GpuCheck.hpp"

namespace moesim::kernels::layer {

enum class Transport { NCCL, COPY_ENGINE, LOCAL_COPY };

/** @brief Another rank failed; the barrier stops waiting so that every thread can unwind. */
class BarrierAborted : public std::runtime_error {
 public:
  BarrierAborted() : std::runtime_error("another rank failed; stopping") {}
};

/**
 * @brief A reusable barrier that spins on an atomic (no futex: the wait is a few µs, and a
 * sleeping thread would add wake-up latency to every collective).
 */
class SpinBarrier {
 public:
  explicit SpinBarrier(int parties) : parties_(parties) {}
  /** @throws BarrierAborted once abort() was called. */
  void arrive_and_wait();
  void abort() { aborted_.store(true); }
  bool aborted() const { return aborted_.load(); }

 private:
  const int parties_;
  std::atomic<int> waiting_{0};
  std::atomic<unsigned> generation_{0};
  std::atomic<bool> aborted_{false};
};

/** @brief What all ranks share: every rank's state (for peer pointers), communicators, barrier. */
struct World {
  std::vector<RankState*> ranks;
  std::vector<ncclComm_t> comms;
  SpinBarrier* barrier = nullptr;
  /// Per rank: host ms its thread has waited at copy-engine barriers for the other ranks' threads (each
  /// rank's thread adds to its own entry only)
  std::vector<double> barrier_wait_ms;
};

/** @brief One rank's side of an all-to-all: where rows leave from and land, per peer. */
struct AllToAllView {
  const bf16_t* send = nullptr;
  bf16_t* recv = nullptr;
  const std::vector<std::int64_t>* send_rows = nullptr;
  const std::vector<std::int64_t>* send_offset = nullptr;
  const std::vector<std::int64_t>* recv_rows = nullptr;
  const std::vector<std::int64_t>* recv_offset = nullptr;
  std::int64_t width = 0;  ///< values per row
};

/**
 * @brief Dispatch sends the permuted rows to the experts' ranks; Combine sends the expert outputs
 * back (its counts are Dispatch's, transposed). `slot` picks the receive buffer (the layer for the
 * copy-engine path, 0 otherwise).
 */
AllToAllView alltoall_view(RankState& s, Comm comm, std::size_t slot);

/** @brief ncclGroupStart; ncclSend/ncclRecv per peer; ncclGroupEnd, on s.comm. */
void nccl_alltoall(const AllToAllView& view, ncclComm_t comm, cudaStream_t stream);

/**
 * @brief Copy-engine all-to-all of rank `r` on its comm stream (see the file comment); `event` is
 * event_index(layer, comm). Every rank must call it for the same collective (it meets the others
 * at the barrier).
 */
void copy_engine_alltoall(World& world, int r, Comm comm, std::size_t slot, std::size_t event);

/** @brief ncclAllReduce(sum) in place over `count` bf16 values. */
void nccl_allreduce(bf16_t* data, std::size_t count, ncclComm_t comm, cudaStream_t stream);

/** @brief Compute-only stand-in: copies the bytes the rank would receive from its send buffer. */
void local_copy_alltoall(const AllToAllView& view, cudaStream_t stream);

}  // namespace moesim::kernels::layer
