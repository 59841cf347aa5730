// persistent_bench: the costs a FlashMoE-style persistent kernel is built from.
//
//   queue      a persistent grid of B blocks pulls T tasks from a device-side queue (one atomicAdd
//              on a global head per task, broadcast through shared memory). Reports the time per
//              task at the grid's throughput and per block (dispatch latency = time·B/T), for an
//              empty task and for a small fixed task (--task_flops FMAs per thread).
//   mailbox    block 0 schedules, blocks 1..B-1 process: the scheduler writes a task id into an
//              idle processor's mailbox, the processor spins on it, runs the task and marks itself
//              idle (FlashMoE's scheduler/subscriber -> processor path). Time per task.
//   peer_store device-initiated one-sided stores from GPU 0 into GPU 1's memory over NVLink
//              (peer access; SM-driven, 16-byte stores), bandwidth vs number of issuing blocks;
//              local_store is the same kernel into GPU 0's own memory for reference.
#include <algorithm>
#include <memory>

#include "BenchRunner.hpp"
#include "DeviceBuffer.hpp"
#include "DeviceInfo.hpp"
#include "moesim/kernels/SizeSweep.hpp"

namespace moesim::kernels {
namespace {

__device__ float small_task(int task, int flops) {
  float value = static_cast<float>(task + threadIdx.x);
  for (int i = 0; i < flops; ++i) value = value * 0.999f + 0.5f;
  return value;
}

__global__ void queue_kernel(int* head, int tasks, int* done, int flops, float* sink) {
  __shared__ int task;
  float acc = 0;
  while (true) {
    if (threadIdx.x == 0) task = atomicAdd(head, 1);
    __syncthreads();
    const int current = task;
    __syncthreads();
    if (current >= tasks) break;
    if (flops > 0) acc += small_task(current, flops);
    if (threadIdx.x == 0) done[current] += 1;
  }
  if (acc == 12345.0f) sink[0] = acc;  // keeps the task's arithmetic alive
}

// mailbox[p] = task + 1 when busy, 0 when idle; -1 tells processor p to exit.
__global__ void mailbox_kernel(volatile int* mailbox, int tasks, int* done, int flops, float* sink) {
  const int processors = static_cast<int>(gridDim.x) - 1;
  if (blockIdx.x == 0) {
    if (threadIdx.x != 0) return;
    int next = 0;
    int p = 0;
    while (next < tasks) {
      if (mailbox[1 + p] == 0) {
        mailbox[1 + p] = next + 1;
        __threadfence();
        ++next;
      }
      p = (p + 1) % processors;
    }
    for (int q = 0; q < processors; ++q) {
      while (mailbox[1 + q] != 0) {
      }
      mailbox[1 + q] = -1;
    }
    __threadfence();
    return;
  }
  __shared__ int task;
  float acc = 0;
  while (true) {
    if (threadIdx.x == 0) {
      int value;
      while ((value = mailbox[blockIdx.x]) == 0) {
      }
      task = value;
    }
    __syncthreads();
    const int current = task;
    __syncthreads();
    if (current < 0) break;
    if (flops > 0) acc += small_task(current - 1, flops);
    __syncthreads();
    if (threadIdx.x == 0) {
      done[current - 1] += 1;
      __threadfence();
      mailbox[blockIdx.x] = 0;
    }
  }
  if (acc == 12345.0f) sink[0] = acc;
}

__global__ void store_kernel(uint4* destination, std::size_t vectors, unsigned seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += stride) {
    const auto word = static_cast<unsigned>(i) ^ seed;
    destination[i] = make_uint4(word, word + 1, word + 2, word + 3);
  }
}

class PersistentBench {
 public:
  PersistentBench(BenchSession& session, std::int64_t tasks, std::int64_t task_flops,
                  std::uint64_t store_bytes)
      : session_(session), tasks_(tasks), task_flops_(task_flops), store_bytes_(store_bytes) {
    device_ = session.devices().front();
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    sms_ = describe_gpu(device_).multiprocessors;
    std::vector<TextColumn> columns{{"measure", "", 11}, {"blocks", "", 6}, {"work", "", 6}, {"ops", "", 9}};
    for (const TextColumn& column : time_columns()) columns.push_back(column);
    columns.push_back({"per_op", "ns", 9});
    columns.push_back({"per_blk", "ns", 9});
    columns.push_back({"bw", "GB/s", 8});
    for (const TextColumn& column : check_columns()) columns.push_back(column);
    session.log().start_table(TextTable(columns));
    session.log().comment(
        "time = one launch; per_op = time/ops; per_blk = time*blocks/ops (queue: dispatch "
        "latency one block sees); bw = bytes stored / time");
  }
  ~PersistentBench() { (void)cudaStreamDestroy(stream_); }

  void run_queue(const std::vector<std::int64_t>& block_counts) {
    DeviceBuffer head(device_, sizeof(int)), done(device_, static_cast<std::size_t>(tasks_) * sizeof(int)),
        sink(device_, sizeof(float));
    for (bool with_work : {false, true}) {
      for (std::int64_t blocks : block_counts) {
        const int flops = with_work ? static_cast<int>(task_flops_) : 0;
        auto launch = [&] {
          CUDA_CHECK(cudaMemsetAsync(head.get(), 0, sizeof(int), stream_));
          queue_kernel<<<static_cast<unsigned>(blocks), 128, 0, stream_>>>(
              head.as<int>(), static_cast<int>(tasks_), done.as<int>(), flops, sink.as<float>());
          CUDA_CHECK_LAUNCH();
        };
        measure("queue", blocks, with_work, done, launch, 0);
      }
    }
  }

  void run_mailbox(const std::vector<std::int64_t>& block_counts) {
    DeviceBuffer mailbox(device_, static_cast<std::size_t>(sms_ + 1) * sizeof(int)),
        done(device_, static_cast<std::size_t>(tasks_) * sizeof(int)), sink(device_, sizeof(float));
    for (bool with_work : {false, true}) {
      for (std::int64_t blocks : block_counts) {
        if (blocks < 2 || blocks > sms_) continue;  // all blocks must be resident: one per SM at most
        const int flops = with_work ? static_cast<int>(task_flops_) : 0;
        auto launch = [&] {
          CUDA_CHECK(cudaMemsetAsync(mailbox.get(), 0, mailbox.bytes(), stream_));
          mailbox_kernel<<<static_cast<unsigned>(blocks), 128, 0, stream_>>>(
              mailbox.as<int>(), static_cast<int>(tasks_), done.as<int>(), flops, sink.as<float>());
          CUDA_CHECK_LAUNCH();
        };
        measure("mailbox", blocks, with_work, done, launch, 0);
      }
    }
  }

  void run_peer_stores(const std::vector<std::int64_t>& block_counts) {
    const std::vector<int>& devices = session_.devices();
    const std::size_t vectors = store_bytes_ / sizeof(uint4);
    std::vector<std::pair<std::string, int>> targets{{"local_store", device_}};
    if (devices.size() >= 2) {
      int can_access = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, device_, devices[1]));
      if (can_access) {
        CUDA_CHECK(cudaSetDevice(device_));
        const cudaError_t status = cudaDeviceEnablePeerAccess(devices[1], 0);
        if (status != cudaErrorPeerAccessAlreadyEnabled) CUDA_CHECK(status);
        (void)cudaGetLastError();
        targets.emplace_back("peer_store", devices[1]);
      } else {
        session_.log().comment("GPU " + std::to_string(device_) + " cannot access GPU " +
                               std::to_string(devices[1]) + " as a peer: peer_store skipped");
      }
    } else {
      session_.log().comment("peer_store needs -g 2 or more: skipped");
    }
    for (const auto& [name, target] : targets) {
      DeviceBuffer destination(target, vectors * sizeof(uint4));
      CUDA_CHECK(cudaSetDevice(device_));
      for (std::int64_t blocks : block_counts) {
        const auto seed = static_cast<unsigned>(blocks * 7919);
        auto launch = [&] {
          store_kernel<<<static_cast<unsigned>(blocks), 512, 0, stream_>>>(destination.as<uint4>(), vectors,
                                                                           seed);
          CUDA_CHECK_LAUNCH();
        };
        measure(name, blocks, false, destination, launch, static_cast<double>(vectors * sizeof(uint4)));
      }
    }
  }

 private:
  // Times `launch` (warm-up + iters), then checks the task counters or the stored pattern.
  template <typename Launch>
  void measure(const std::string& measure, std::int64_t blocks, bool with_work, const DeviceBuffer& output,
               Launch launch, double bytes) {
    const CommonOptions& options = session_.options();
    const auto iters = static_cast<std::size_t>(options.iters);
    const bool is_store = bytes > 0;
    if (!is_store) CUDA_CHECK(cudaMemsetAsync(output.get(), 0, output.bytes(), stream_));
    for (std::int64_t i = 0; i < options.warmup_iters; ++i) launch();
    EventTimeline timeline(device_, iters);
    for (std::size_t i = 0; i < iters; ++i) {
      timeline.record_start(i, stream_);
      launch();
      timeline.record_end(i, stream_);
    }
    timeline.synchronize(iters);
    std::vector<double> samples(iters);
    for (std::size_t i = 0; i < iters; ++i) samples[i] = timeline.elapsed_ms(i) * 1e3;
    const SampleStats stats = summarize(samples);

    ErrorTally tally(0);
    const auto launches = static_cast<int>(options.warmup_iters + options.iters);
    if (is_store) {
      std::vector<uint4> host(std::min<std::size_t>(output.bytes() / sizeof(uint4), 1u << 16));
      const std::size_t offset = output.bytes() / sizeof(uint4) - host.size();
      CUDA_CHECK(cudaMemcpy(host.data(), output.as<uint4>() + offset, host.size() * sizeof(uint4),
                            cudaMemcpyDeviceToHost));
      const auto seed = static_cast<unsigned>(blocks * 7919);
      for (std::size_t i = 0; i < host.size(); ++i) {
        const auto word = static_cast<unsigned>(offset + i) ^ seed;
        tally.add(host[i].x == word && host[i].w == word + 3 ? 0 : 1, 0, 1);
      }
    } else {
      std::vector<int> host(static_cast<std::size_t>(tasks_));
      CUDA_CHECK(cudaMemcpy(host.data(), output.get(), host.size() * sizeof(int), cudaMemcpyDeviceToHost));
      for (int count : host) tally.add(count, launches, launches);  // each task ran once per launch
    }
    session_.record_verification(tally);

    const double ops = is_store ? 1.0 : static_cast<double>(tasks_);
    const double per_op_ns = stats.p50 * 1e3 / ops;
    const double per_block_ns = per_op_ns * static_cast<double>(measure == "mailbox" ? blocks - 1 : blocks);
    const double bandwidth = is_store ? gigabytes_per_second(bytes, stats.p50 * 1e-6) : 0.0;
    const std::string work = with_work ? std::to_string(task_flops_) : "0";
    std::vector<std::string> cells{
        measure, std::to_string(blocks), work,
        is_store ? format_bytes(static_cast<std::uint64_t>(bytes)) : std::to_string(tasks_)};
    for (const std::string& cell : time_cells(stats)) cells.push_back(cell);
    cells.push_back(is_store ? "N/A" : format_fixed(per_op_ns, 1));
    cells.push_back(is_store ? "N/A" : format_fixed(per_block_ns, 1));
    cells.push_back(format_fixed(bandwidth, 1));
    for (const std::string& cell : check_cells(tally, true)) cells.push_back(cell);
    Json record = Json::object();
    record["measure"] = measure;
    record["blocks"] = static_cast<long long>(blocks);
    record["task_flops_per_thread"] = with_work ? static_cast<long long>(task_flops_) : 0LL;
    record[is_store ? "bytes" : "tasks"] = is_store ? bytes : static_cast<double>(tasks_);
    record["time_us"] = time_json(stats);
    if (!is_store) record["per_op_ns"] = per_op_ns;
    if (!is_store) record["per_block_ns"] = per_block_ns;
    if (is_store) record["bw_GBps"] = bandwidth;
    record["check"] = check_json(tally, true);
    session_.log().add_row(cells, record);
  }

  BenchSession& session_;
  std::int64_t tasks_;
  std::int64_t task_flops_;
  std::uint64_t store_bytes_;
  int device_ = 0;
  int sms_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session("persistent",
                       "persistent-kernel task dispatch (queue, mailbox) and device-initiated peer stores");
  std::int64_t tasks = 1 << 18;
  std::int64_t task_flops = 256;
  std::uint64_t store_bytes = 1ULL << 30;
  std::vector<std::int64_t> blocks{1, 2, 8, 32, 66, 132};
  std::vector<std::int64_t> store_blocks{1, 2, 4, 8, 16, 32, 64, 132, 264};
  std::string parts = "queue,mailbox,store";
  CliOptions& parser = session.parser();
  parser.add_int("tasks", 0, &tasks, "tasks per launch (queue, mailbox)", 1);
  parser.add_int("task_flops", 0, &task_flops, "FMAs per thread of the small task", 0);
  parser.add_int_list("blocks", 0, &blocks, "persistent grid sizes");
  parser.add_int_list("store_blocks", 0, &store_blocks, "issuing blocks of the store kernel");
  parser.add_bytes("store_bytes", 0, &store_bytes, "bytes stored per launch");
  parser.add_string("parts", 0, &parts, "what to run: queue,mailbox,store");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    s.open({});
    PersistentBench bench(s, tasks, task_flops, store_bytes);
    if (parts.find("queue") != std::string::npos) bench.run_queue(blocks);
    if (parts.find("mailbox") != std::string::npos) bench.run_mailbox(blocks);
    if (parts.find("store") != std::string::npos) bench.run_peer_stores(store_blocks);
  });
}
