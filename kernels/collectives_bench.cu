// collectives_bench: NCCL (RCCL) collectives on 1..N GPUs of one node, one process, one thread,
// one communicator per GPU (ncclCommInitAll) and ncclGroupStart/End around the per-GPU calls;
// plus an all-to-all made of cudaMemcpyPeerAsync copies (copy engines, no SMs).
//
// Sizes and bandwidths follow nccl-tests (doc/PERFORMANCE.md): S is the largest per-rank buffer
//   all_reduce       S = count·4                  busbw = algbw·2(n-1)/n
//   all_gather       S = receive bytes (n·chunk)  busbw = algbw·(n-1)/n
//   reduce_scatter   S = send bytes (n·chunk)     busbw = algbw·(n-1)/n
//   all_to_all       S = send bytes (n·chunk)     busbw = algbw·(n-1)/n   (ncclSend/ncclRecv pairs)
//   all_to_all_uneven  per-pair counts in proportion to weights in [0.25, 1.75], each rank still sends S
//                    (UnevenSplit.hpp)
//   ce_all_to_all    all_to_all through cudaMemcpyPeerAsync, one stream per (source, destination)
//   [ce_]all_to_all_hot_in|out  rank 0 receives (in, a Dispatch) or sends (out, a Combine) --hot times an
//                    even share from / to every peer; the other rows (in) or columns (out) stay even
// algbw = S / time, time = the slowest GPU's event-timed iteration. Data are fp32 small integers, so
// sums are exact and every received element is checked (#wrong).
// With several GPUs each timed iteration starts from idle streams held by a spin kernel (see
// hold_streams_us): one host thread issues every GPU's part one after the other (a group launch,
// or 16 copies with their events at 4 GPUs, ~70 µs), and without the hold that issue time and the
// skew it leaves between the GPUs would be timed as collective latency.
#include <memory>
#include <sstream>

#include "BenchRunner.hpp"
#include "DeviceBuffer.hpp"
#include "moesim/kernels/SizeSweep.hpp"
#include "moesim/kernels/UnevenSplit.hpp"

namespace moesim::kernels {
namespace {

enum class Collective {
  ALL_REDUCE,
  ALL_GATHER,
  REDUCE_SCATTER,
  ALL_TO_ALL,
  ALL_TO_ALL_UNEVEN,
  CE_ALL_TO_ALL,
  ALL_TO_ALL_HOT_IN,
  ALL_TO_ALL_HOT_OUT,
  CE_ALL_TO_ALL_HOT_IN,
  CE_ALL_TO_ALL_HOT_OUT
};

constexpr Collective kAllCollectives[] = {
    Collective::ALL_REDUCE,           Collective::ALL_GATHER,         Collective::REDUCE_SCATTER,
    Collective::ALL_TO_ALL,           Collective::ALL_TO_ALL_UNEVEN,  Collective::CE_ALL_TO_ALL,
    Collective::ALL_TO_ALL_HOT_IN,    Collective::ALL_TO_ALL_HOT_OUT, Collective::CE_ALL_TO_ALL_HOT_IN,
    Collective::CE_ALL_TO_ALL_HOT_OUT};

// Per-pair counts instead of one chunk per pair.
__host__ __device__ constexpr bool is_uneven(Collective op) {
  return op == Collective::ALL_TO_ALL_UNEVEN || op == Collective::ALL_TO_ALL_HOT_IN ||
         op == Collective::ALL_TO_ALL_HOT_OUT || op == Collective::CE_ALL_TO_ALL_HOT_IN ||
         op == Collective::CE_ALL_TO_ALL_HOT_OUT;
}

constexpr bool uses_copy_engines(Collective op) {
  return op == Collective::CE_ALL_TO_ALL || op == Collective::CE_ALL_TO_ALL_HOT_IN ||
         op == Collective::CE_ALL_TO_ALL_HOT_OUT;
}

const char* collective_name(Collective op) {
  switch (op) {
    case Collective::ALL_REDUCE:
      return "all_reduce";
    case Collective::ALL_GATHER:
      return "all_gather";
    case Collective::REDUCE_SCATTER:
      return "reduce_scatter";
    case Collective::ALL_TO_ALL:
      return "all_to_all";
    case Collective::ALL_TO_ALL_UNEVEN:
      return "all_to_all_uneven";
    case Collective::CE_ALL_TO_ALL:
      return "ce_all_to_all";
    case Collective::ALL_TO_ALL_HOT_IN:
      return "all_to_all_hot_in";
    case Collective::ALL_TO_ALL_HOT_OUT:
      return "all_to_all_hot_out";
    case Collective::CE_ALL_TO_ALL_HOT_IN:
      return "ce_all_to_all_hot_in";
    case Collective::CE_ALL_TO_ALL_HOT_OUT:
      return "ce_all_to_all_hot_out";
  }
  return "?";
}

__host__ __device__ inline float pattern(int rank, std::size_t index) {
  const std::uint64_t h =
      (static_cast<std::uint64_t>(rank) * 0x9E3779B97F4A7C15ULL) ^ (index * 0xBF58476D1CE4E5B9ULL);
  return static_cast<float>(static_cast<int>((h >> 33) % 17) - 8);
}

__global__ void fill_pattern_kernel(float* data, std::size_t count, int rank) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    data[i] = pattern(rank, i);
  }
}

// Expected value of received element i at `rank` (see the table in the file comment).
struct ExpectedLayout {
  Collective op;
  int ranks;
  int rank;
  std::size_t chunk;            // elements per rank-chunk (even layouts)
  const std::size_t* counts;    // uneven: counts[s * ranks + r]
  const std::size_t* send_off;  // uneven: offset of r's chunk in s's send buffer
  const std::size_t* recv_off;  // uneven: offset of s's chunk in r's receive buffer
};

__device__ float expected_value(const ExpectedLayout& l, std::size_t i) {
  switch (l.op) {
    case Collective::ALL_REDUCE: {
      float sum = 0;
      for (int s = 0; s < l.ranks; ++s) sum += pattern(s, i);
      return sum;
    }
    case Collective::REDUCE_SCATTER: {
      float sum = 0;
      for (int s = 0; s < l.ranks; ++s) sum += pattern(s, static_cast<std::size_t>(l.rank) * l.chunk + i);
      return sum;
    }
    case Collective::ALL_GATHER:
      return pattern(static_cast<int>(i / l.chunk), i % l.chunk);
    case Collective::ALL_TO_ALL:
    case Collective::CE_ALL_TO_ALL:
      return pattern(static_cast<int>(i / l.chunk), static_cast<std::size_t>(l.rank) * l.chunk + i % l.chunk);
    default: {  // per-pair counts (is_uneven)
      int s = 0;
      while (s + 1 < l.ranks && l.recv_off[(s + 1) * l.ranks + l.rank] <= i) ++s;
      const std::size_t within = i - l.recv_off[s * l.ranks + l.rank];
      return pattern(s, l.send_off[s * l.ranks + l.rank] + within);
    }
  }
  return 0;
}

__global__ void check_kernel(ExpectedLayout layout, const float* received, std::size_t count,
                             unsigned long long* wrong) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    if (!(received[i] == expected_value(layout, i))) ++local;
  }
  if (local > 0) atomicAdd(wrong, local);
}

struct CollectiveCase {
  Collective op;
  std::uint64_t bytes;  // S
};

class CollectivesBench : public CaseBench {
 public:
  CollectivesBench(const CommonOptions& common, const std::vector<int>& devices,
                   std::vector<CollectiveCase> cases, std::uint64_t max_bytes, double hot)
      : common_(common),
        devices_(devices),
        ranks_(static_cast<int>(devices.size())),
        cases_(std::move(cases)),
        hot_(hot) {
    comms_.resize(devices_.size());
    NCCL_CHECK(ncclCommInitAll(comms_.data(), ranks_, devices_.data()));
    for (int r = 0; r < ranks_; ++r) {
      CUDA_CHECK(cudaSetDevice(devices_[r]));
      cudaStream_t stream = nullptr;
      CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      streams_.push_back(stream);
      send_.emplace_back(devices_[r], 2 * max_bytes);  // a hot rank sends up to 2·S
      recv_.emplace_back(devices_[r], 2 * max_bytes);  // and receives up to 2·S
      for (int peer = 0; peer < ranks_; ++peer) {
        if (peer != r) {
          int can_access = 0;
          CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, devices_[r], devices_[peer]));
          if (can_access) {
            const cudaError_t status = cudaDeviceEnablePeerAccess(devices_[peer], 0);
            if (status != cudaErrorPeerAccessAlreadyEnabled) CUDA_CHECK(status);
            (void)cudaGetLastError();
          }
        }
        cudaStream_t pair = nullptr;
        CUDA_CHECK(cudaStreamCreateWithFlags(&pair, cudaStreamNonBlocking));
        pair_streams_.push_back(pair);
        cudaEvent_t fork = nullptr, join = nullptr;
        CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
        CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
        fork_events_.push_back(fork);
        join_events_.push_back(join);
      }
    }
  }

  ~CollectivesBench() override {
    for (ncclComm_t comm : comms_) (void)ncclCommDestroy(comm);
    for (cudaStream_t s : streams_) (void)cudaStreamDestroy(s);
    for (cudaStream_t s : pair_streams_) (void)cudaStreamDestroy(s);
    for (cudaEvent_t e : fork_events_) (void)cudaEventDestroy(e);
    for (cudaEvent_t e : join_events_) (void)cudaEventDestroy(e);
  }

  std::vector<TextColumn> case_columns() const override {
    return {{"op", "", 17}, {"size", "B", 11}, {"count", "elts", 10}, {"type", "", 5}, {"redop", "", 5}};
  }
  std::vector<TextColumn> metric_columns() const override {
    return {{"algbw", "GB/s", 8}, {"busbw", "GB/s", 8}};
  }
  std::size_t case_count() const override { return cases_.size(); }

  CaseDescription describe(std::size_t index) const override {
    const CollectiveCase& c = cases_[index];
    const bool reduces = c.op == Collective::ALL_REDUCE || c.op == Collective::REDUCE_SCATTER;
    CaseDescription d;
    d.cells = {collective_name(c.op), std::to_string(c.bytes), std::to_string(c.bytes / 4), "float",
               reduces ? "sum" : "none"};
    d.params["op"] = collective_name(c.op);
    d.params["size_bytes"] = static_cast<unsigned long long>(c.bytes);
    d.params["count"] = static_cast<unsigned long long>(c.bytes / 4);
    d.params["type"] = "float";
    d.params["redop"] = reduces ? "sum" : "none";
    d.params["ranks"] = ranks_;
    return d;
  }

  void init(std::size_t index) override {
    const CollectiveCase& c = cases_[index];
    const std::size_t elements = c.bytes / 4;
    chunk_ = c.op == Collective::ALL_REDUCE ? elements : elements / static_cast<std::size_t>(ranks_);
    if (chunk_ == 0) throw CaseSkipped("fewer than one element per rank");
    if (uses_copy_engines(c.op) && ranks_ > 1) require_peer_access();
    if (c.op == Collective::ALL_TO_ALL_UNEVEN) {
      set_counts(uneven_all_to_all_counts(ranks_, chunk_, static_cast<std::uint64_t>(common_.seed) + index));
    } else if (is_uneven(c.op)) {
      // Rank 0 receives (1 + (n-1)·hot) chunks; the buffers hold 2·n.
      if (ranks_ < 2 || hot_ >= ranks_ || 1 + (ranks_ - 1) * hot_ > 2.0 * ranks_)
        throw CaseSkipped("needs 2+ GPUs and --hot below the GPU count and <= (2n-1)/(n-1)");
      const bool outbound =
          c.op == Collective::ALL_TO_ALL_HOT_OUT || c.op == Collective::CE_ALL_TO_ALL_HOT_OUT;
      set_counts(hot_rank_counts(ranks_, chunk_, hot_, outbound));
    }
    for (int r = 0; r < ranks_; ++r) {
      CUDA_CHECK(cudaSetDevice(devices_[r]));
      fill_pattern_kernel<<<1024, 256, 0, streams_[r]>>>(send_[r].as<float>(), send_count(c), r);
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaMemsetAsync(recv_[r].get(), 0xff, recv_count(c, r) * 4, streams_[r]));  // NaN
    }
  }

  void run(std::size_t index) override {
    const CollectiveCase& c = cases_[index];
    if (uses_copy_engines(c.op)) {
      run_copy_engine_all_to_all(is_uneven(c.op));
      return;
    }
    NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < ranks_; ++r) {
      const float* send = send_[r].as<float>();
      float* recv = recv_[r].as<float>();
      switch (c.op) {
        case Collective::ALL_REDUCE:
          NCCL_CHECK(ncclAllReduce(send, recv, chunk_, ncclFloat, ncclSum, comms_[r], streams_[r]));
          break;
        case Collective::ALL_GATHER:
          NCCL_CHECK(ncclAllGather(send, recv, chunk_, ncclFloat, comms_[r], streams_[r]));
          break;
        case Collective::REDUCE_SCATTER:
          NCCL_CHECK(ncclReduceScatter(send, recv, chunk_, ncclFloat, ncclSum, comms_[r], streams_[r]));
          break;
        case Collective::ALL_TO_ALL:
          for (int peer = 0; peer < ranks_; ++peer) {
            NCCL_CHECK(ncclSend(send + peer * chunk_, chunk_, ncclFloat, peer, comms_[r], streams_[r]));
            NCCL_CHECK(ncclRecv(recv + peer * chunk_, chunk_, ncclFloat, peer, comms_[r], streams_[r]));
          }
          break;
        case Collective::ALL_TO_ALL_UNEVEN:
        case Collective::ALL_TO_ALL_HOT_IN:
        case Collective::ALL_TO_ALL_HOT_OUT:
          for (int peer = 0; peer < ranks_; ++peer) {
            NCCL_CHECK(ncclSend(send + send_off_[r * ranks_ + peer], counts_[r * ranks_ + peer], ncclFloat,
                                peer, comms_[r], streams_[r]));
            NCCL_CHECK(ncclRecv(recv + recv_off_[peer * ranks_ + r], counts_[peer * ranks_ + r], ncclFloat,
                                peer, comms_[r], streams_[r]));
          }
          break;
        default:  // copy engines: above
          break;
      }
    }
    NCCL_CHECK(ncclGroupEnd());
  }

  std::vector<DeviceStream> streams() const override {
    std::vector<DeviceStream> result;
    for (int r = 0; r < ranks_; ++r) result.push_back({devices_[r], streams_[r]});
    return result;
  }

  WorkCount bytes_and_flops(std::size_t index) const override {
    const CollectiveCase& c = cases_[index];
    const double size = static_cast<double>(c.op == Collective::ALL_REDUCE ? chunk_ : chunk_ * ranks_) * 4;
    return {size, 0};
  }

  std::vector<double> metrics(std::size_t index, const WorkCount& work, double seconds) const override {
    const double algbw = gigabytes_per_second(work.bytes, seconds);
    const double n = ranks_;
    const double factor = cases_[index].op == Collective::ALL_REDUCE ? 2 * (n - 1) / n : (n - 1) / n;
    return {algbw, algbw * factor};
  }

  ErrorTally verify(std::size_t index) override;

  double hold_streams_us() const override { return ranks_ > 1 ? kHoldUs : 0; }

 private:
  static constexpr double kHoldUs = 500;  // several times the host's issue time of one iteration

  std::size_t send_count(const CollectiveCase& c) const {
    if (is_uneven(c.op)) return 2 * chunk_ * ranks_;  // every rank's largest row fits
    return c.op == Collective::ALL_REDUCE || c.op == Collective::ALL_GATHER ? chunk_ : chunk_ * ranks_;
  }
  std::size_t recv_count(const CollectiveCase& c, int rank) const {
    if (is_uneven(c.op)) {
      std::size_t total = 0;
      for (int s = 0; s < ranks_; ++s) total += counts_[s * ranks_ + rank];
      return total;
    }
    switch (c.op) {
      case Collective::ALL_REDUCE:
        return chunk_;
      case Collective::REDUCE_SCATTER:
        return chunk_;
      default:
        return chunk_ * ranks_;
    }
  }

  void require_peer_access() const {
    for (int r = 0; r < ranks_; ++r) {
      for (int peer = 0; peer < ranks_; ++peer) {
        int can_access = 1;
        if (peer != r) CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, devices_[r], devices_[peer]));
        if (!can_access) throw CaseSkipped("GPUs without peer access: copies would stage through the host");
      }
    }
  }

  void set_counts(const std::vector<std::uint64_t>& counts) {
    counts_.assign(counts.begin(), counts.end());
    const auto n = static_cast<std::size_t>(ranks_);
    send_off_.assign(n * n, 0);
    recv_off_.assign(n * n, 0);
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t r = 1; r < n; ++r)
        send_off_[s * n + r] = send_off_[s * n + r - 1] + counts_[s * n + r - 1];
    }
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t s = 1; s < n; ++s)
        recv_off_[s * n + r] = recv_off_[(s - 1) * n + r] + counts_[(s - 1) * n + r];
    }
  }

  void run_copy_engine_all_to_all(bool uneven) {
    for (int r = 0; r < ranks_; ++r) {
      CUDA_CHECK(cudaSetDevice(devices_[r]));
      for (int peer = 0; peer < ranks_; ++peer) {
        const std::size_t pair = static_cast<std::size_t>(r * ranks_ + peer);
        const std::size_t bytes = 4 * (uneven ? counts_[pair] : chunk_);
        const std::size_t send_at = 4 * (uneven ? send_off_[pair] : static_cast<std::size_t>(peer) * chunk_);
        const std::size_t recv_at = 4 * (uneven ? recv_off_[pair] : static_cast<std::size_t>(r) * chunk_);
        CUDA_CHECK(cudaEventRecord(fork_events_[pair], streams_[r]));
        CUDA_CHECK(cudaStreamWaitEvent(pair_streams_[pair], fork_events_[pair], 0));
        const char* source = send_[r].as<char>() + send_at;
        char* destination = recv_[peer].as<char>() + recv_at;
        CUDA_CHECK(cudaMemcpyPeerAsync(destination, devices_[peer], source, devices_[r], bytes,
                                       pair_streams_[pair]));
        CUDA_CHECK(cudaEventRecord(join_events_[pair], pair_streams_[pair]));
      }
    }
    // Each GPU's iteration ends when everything it receives has landed.
    for (int r = 0; r < ranks_; ++r) {
      for (int source = 0; source < ranks_; ++source) {
        CUDA_CHECK(
            cudaStreamWaitEvent(streams_[r], join_events_[static_cast<std::size_t>(source * ranks_ + r)], 0));
      }
    }
  }

  const CommonOptions& common_;
  std::vector<int> devices_;
  int ranks_;
  std::vector<CollectiveCase> cases_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_, pair_streams_;
  std::vector<cudaEvent_t> fork_events_, join_events_;
  std::vector<DeviceBuffer> send_, recv_;
  double hot_ = 2;
  std::size_t chunk_ = 0;
  std::vector<std::size_t> counts_, send_off_, recv_off_;
};

ErrorTally CollectivesBench::verify(std::size_t index) {
  const CollectiveCase& c = cases_[index];
  ErrorTally tally(0);
  for (int r = 0; r < ranks_; ++r) {
    CUDA_CHECK(cudaSetDevice(devices_[r]));
    CUDA_CHECK(cudaStreamSynchronize(streams_[r]));
    const std::size_t tables = counts_.size() * sizeof(std::size_t);
    DeviceBuffer wrong(devices_[r], sizeof(unsigned long long));
    DeviceBuffer table(devices_[r], 3 * std::max<std::size_t>(tables, 8));
    auto* table_data = table.as<std::size_t>();
    if (tables > 0) {
      CUDA_CHECK(cudaMemcpy(table_data, counts_.data(), tables, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(table_data + counts_.size(), send_off_.data(), tables, cudaMemcpyHostToDevice));
      CUDA_CHECK(
          cudaMemcpy(table_data + 2 * counts_.size(), recv_off_.data(), tables, cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMemset(wrong.get(), 0, sizeof(unsigned long long)));
    const ExpectedLayout layout{
        c.op, ranks_, r, chunk_, table_data, table_data + counts_.size(), table_data + 2 * counts_.size()};
    const std::size_t count = recv_count(c, r);
    check_kernel<<<1024, 256>>>(layout, recv_[r].as<float>(), count, wrong.as<unsigned long long>());
    CUDA_CHECK_LAUNCH();
    unsigned long long host_wrong = 0;
    CUDA_CHECK(cudaMemcpy(&host_wrong, wrong.get(), sizeof host_wrong, cudaMemcpyDeviceToHost));
    tally.add_counts(static_cast<std::int64_t>(count), static_cast<std::int64_t>(host_wrong),
                     host_wrong ? 1.0 : 0.0);
  }
  return tally;
}

std::vector<Collective> parse_ops(const std::string& text) {
  std::vector<Collective> ops;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    bool found = false;
    for (Collective op : kAllCollectives) {
      if (item == collective_name(op)) {
        ops.push_back(op);
        found = true;
      }
    }
    if (!found) throw ArgError("--ops: unknown collective '" + item + "'");
  }
  return ops;
}

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session("collectives",
                       "NCCL collectives and copy-engine all-to-all on one node: algbw, busbw");
  std::uint64_t min_bytes = 8, max_bytes = 1ULL << 30;
  double factor = 2;
  std::string ops = "all_reduce,all_gather,reduce_scatter,all_to_all,all_to_all_uneven,ce_all_to_all";
  double hot = 2;
  CliOptions& parser = session.parser();
  parser.add_bytes("minbytes", 'b', &min_bytes, "smallest size S");
  parser.add_bytes("maxbytes", 'e', &max_bytes, "largest size S");
  parser.add_double("stepfactor", 'f', &factor, "size multiplier");
  parser.add_string(
      "ops", 0, &ops,
      "collectives to run (also all_to_all_hot_in|out, ce_all_to_all_hot_in|out: rank 0 receives "
      "or sends --hot times an even share)");
  parser.add_double("hot", 0, &hot, "hot rank's share over an even one, 1 to (2n-1)/(n-1)");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    s.open({{"NCCL", nccl_version_text()}});
    s.log().comment("ranks: " + std::to_string(s.devices().size()) + ", out-of-place, float, one process");
    std::vector<CollectiveCase> cases;
    for (Collective op : parse_ops(ops)) {
      for (std::uint64_t bytes : geometric_sizes(min_bytes, max_bytes, factor)) cases.push_back({op, bytes});
    }
    if (!(hot >= 1)) throw ArgError("--hot: must be >= 1");
    CollectivesBench bench(s.options(), s.devices(), cases, max_bytes, hot);
    run_cases(s, bench);
  });
}
