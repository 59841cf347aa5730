#include <chrono>
#include <numeric>
#include <thread>

#include "Transport.hpp"

namespace moesim::kernels::layer {

void SpinBarrier::arrive_and_wait() {
  const unsigned generation = generation_.load(std::memory_order_acquire);
  if (waiting_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
    waiting_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  for (unsigned spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins) {
    if (aborted_.load(std::memory_order_relaxed)) throw BarrierAborted();
    // More threads than free cores (small hosts, CI): let the others run after a while.
    if (spins > 4096) std::this_thread::yield();
  }
}

AllToAllView alltoall_view(RankState& s, Comm comm, std::size_t slot) {
  AllToAllView v;
  v.width = s.shape.hidden;
  if (comm == Comm::DISPATCH) {
    v.send = s.send.as<bf16_t>();
    v.recv = s.dispatch_recv.at(slot).as<bf16_t>();
    v.send_rows = &s.rows.send_rows;
    v.send_offset = &s.rows.send_offset;
    v.recv_rows = &s.rows.recv_rows;
    v.recv_offset = &s.rows.recv_offset;
  } else {
    v.send = s.combine_send.as<bf16_t>();
    v.recv = s.combine_recv.at(slot).as<bf16_t>();
    v.send_rows = &s.rows.recv_rows;  // Combine returns what Dispatch brought
    v.send_offset = &s.rows.recv_offset;
    v.recv_rows = &s.rows.send_rows;
    v.recv_offset = &s.rows.send_offset;
  }
  return v;
}

void nccl_alltoall(const AllToAllView& v, ncclComm_t comm, cudaStream_t stream) {
  const auto width = static_cast<std::size_t>(v.width);
  NCCL_CHECK(ncclGroupStart());
  for (std::size_t peer = 0; peer < v.send_rows->size(); ++peer) {
    const int p = static_cast<int>(peer);
    NCCL_CHECK(ncclSend(v.send + static_cast<std::size_t>((*v.send_offset)[peer]) * width,
                        static_cast<std::size_t>((*v.send_rows)[peer]) * width, ncclBfloat16, p, comm,
                        stream));
    NCCL_CHECK(ncclRecv(v.recv + static_cast<std::size_t>((*v.recv_offset)[peer]) * width,
                        static_cast<std::size_t>((*v.recv_rows)[peer]) * width, ncclBfloat16, p, comm,
                        stream));
  }
  NCCL_CHECK(ncclGroupEnd());
}

void copy_engine_alltoall(World& world, int r, Comm comm, std::size_t slot, std::size_t event) {
  RankState& s = *world.ranks[static_cast<std::size_t>(r)];
  const AllToAllView mine = alltoall_view(s, comm, slot);
  const auto width = static_cast<std::size_t>(mine.width);
  CUDA_CHECK(cudaEventRecord(s.fork, s.comm));
  for (std::size_t d = 0; d < world.ranks.size(); ++d) {
    const auto rows = static_cast<std::size_t>((*mine.send_rows)[d]);
    if (rows == 0) continue;
    RankState& peer = *world.ranks[d];
    const AllToAllView theirs = alltoall_view(peer, comm, slot);
    const bf16_t* source = mine.send + static_cast<std::size_t>((*mine.send_offset)[d]) * width;
    bf16_t* destination =
        theirs.recv + static_cast<std::size_t>((*theirs.recv_offset)[static_cast<std::size_t>(r)]) * width;
    CUDA_CHECK(cudaStreamWaitEvent(s.copy[d], s.fork, 0));
    CUDA_CHECK(cudaMemcpyPeerAsync(destination, peer.device, source, s.device, rows * width * 2, s.copy[d]));
    CUDA_CHECK(cudaEventRecord(s.copy_done[d], s.copy[d]));
    CUDA_CHECK(cudaStreamWaitEvent(s.comm, s.copy_done[d], 0));
  }
  CUDA_CHECK(cudaEventRecord(s.sent[event], s.comm));
  const auto arrived = std::chrono::steady_clock::now();
  world.barrier->arrive_and_wait();  // every sender's `sent` is recorded before anyone waits on it
  world.barrier_wait_ms[static_cast<std::size_t>(r)] +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - arrived).count();
  for (std::size_t src = 0; src < world.ranks.size(); ++src) {
    if (static_cast<int>(src) == r || (*mine.recv_rows)[src] == 0) continue;
    CUDA_CHECK(cudaStreamWaitEvent(s.comm, world.ranks[src]->sent[event], 0));
  }
}

void nccl_allreduce(bf16_t* data, std::size_t count, ncclComm_t comm, cudaStream_t stream) {
  NCCL_CHECK(ncclAllReduce(data, data, count, ncclBfloat16, ncclSum, comm, stream));
}

void local_copy_alltoall(const AllToAllView& v, cudaStream_t stream) {
  const std::int64_t rows = std::accumulate(v.recv_rows->begin(), v.recv_rows->end(), std::int64_t{0});
  if (rows == 0) return;
  CUDA_CHECK(cudaMemcpyAsync(v.recv, v.send, static_cast<std::size_t>(rows * v.width) * 2,
                             cudaMemcpyDeviceToDevice, stream));
}

}  // namespace moesim::kernels::layer
