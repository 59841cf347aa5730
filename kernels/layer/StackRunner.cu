#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "BenchRunner.hpp"
#include "DeviceFill.hpp"
#include "DeviceInfo.hpp"
#include "StackRunner.hpp"
#include "moesim/kernels/Statistics.hpp"

namespace moesim::kernels::layer {
namespace {

std::vector<float> rows_to_host(const DeviceBuffer& buffer, const std::vector<std::int64_t>& rows,
                                std::int64_t width) {
  std::vector<float> values;
  std::vector<bf16_t> raw(static_cast<std::size_t>(width));
  for (std::int64_t row : rows) {
    CUDA_CHECK(
        cudaMemcpy(raw.data(), buffer.as<bf16_t>() + row * width, raw.size() * 2, cudaMemcpyDeviceToHost));
    for (bf16_t v : raw) values.push_back(bf16_to_float(v));
  }
  return values;
}

}  // namespace

std::vector<double> PassTimes::stack_ms() const {
  std::vector<double> result;
  for (const auto& ranks : ms) result.push_back(*std::max_element(ranks.begin(), ranks.end()));
  return result;
}

std::vector<double> PassTimes::rank_ms(int rank) const {
  std::vector<double> result;
  for (const auto& ranks : ms) result.push_back(ranks.at(static_cast<std::size_t>(rank)));
  return result;
}

Stack::Stack(const RunConfig& config, const std::vector<int>& devices,
             const std::vector<TokenRouting>& routing)
    : config_(config), devices_(devices), barrier_(std::make_unique<SpinBarrier>(config.gpus)) {
  if (config.comm == MoeComm::ALLTOALL) {
    alltoall_plans_ = plan_alltoall(routing, static_cast<int>(config.model.experts), config.top_k());
  } else {
    allreduce_plans_ =
        plan_allreduce(routing.at(0), static_cast<int>(config.model.experts), config.top_k(), config.gpus);
  }
  enable_peer_access(devices_);
  for (int r = 0; r < config.gpus; ++r) {
    PlanRef plan;
    if (config.comm == MoeComm::ALLTOALL) {
      plan.alltoall = &alltoall_plans_[static_cast<std::size_t>(r)];
    } else {
      plan.allreduce = &allreduce_plans_[static_cast<std::size_t>(r)];
    }
    states_.push_back(std::make_unique<RankState>(config, r, devices_[static_cast<std::size_t>(r)], plan));
    world_.ranks.push_back(states_.back().get());
  }
  world_.comms.resize(static_cast<std::size_t>(config.gpus));
  NCCL_CHECK(ncclCommInitAll(world_.comms.data(), config.gpus, devices_.data()));
  world_.barrier = barrier_.get();
  world_.barrier_wait_ms.assign(static_cast<std::size_t>(config.gpus), 0.0);
  for (int r = 0; r < config.gpus; ++r) runners_.push_back(std::make_unique<RankRunner>(config, world_, r));
}

Stack::~Stack() {
  runners_.clear();
  for (ncclComm_t comm : world_.comms) (void)ncclCommDestroy(comm);
  states_.clear();
}

void Stack::on_every_rank(const std::function<void(int)>& fn) {
  std::exception_ptr first;
  std::mutex lock;
  std::vector<std::thread> threads;
  for (int r = 0; r < config_.gpus; ++r) {
    threads.emplace_back([&, r] {
      try {
        CUDA_CHECK(cudaSetDevice(devices_[static_cast<std::size_t>(r)]));
        fn(r);
      } catch (...) {
        const std::lock_guard<std::mutex> guard(lock);
        if (!first) first = std::current_exception();
        barrier_->abort();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

void Stack::run_iteration(int rank, const std::vector<Step>& steps) {
  RankRunner& runner = *runners_[static_cast<std::size_t>(rank)];
  for (const Step& step : steps) runner.execute(step);
  runner.join();
}

void Stack::configure_timed(ScheduleKind kind, PassMode mode) {
  for (auto& runner : runners_) {
    runner->configure(kind, mode);
    runner->set_identity_experts(false);
  }
}

std::vector<PassTimes> Stack::time_passes(const std::vector<PassSpec>& passes, PassOrder order) {
  const auto per_pass = static_cast<std::size_t>(config_.warmup + config_.iters);
  const std::size_t count = passes.size();
  // timelines[p][r]: pass p's iteration events on rank r.
  std::vector<std::vector<std::unique_ptr<EventTimeline>>> timelines(count);
  for (auto& ranks : timelines)
    for (int r = 0; r < config_.gpus; ++r)
      ranks.push_back(std::make_unique<EventTimeline>(devices_[static_cast<std::size_t>(r)], per_pass));
  std::vector<std::string> bus_ids;
  for (int device : devices_) bus_ids.push_back(describe_gpu(device).pci_bus_id);
  PassSampler sampler(bus_ids, count);
  // waits[p][i][r]: rank r's copy-engine barrier waits in iteration i of pass p.
  std::vector<std::vector<std::vector<double>>> waits(
      count, std::vector<std::vector<double>>(per_pass,
                                              std::vector<double>(static_cast<std::size_t>(config_.gpus))));
  on_every_rank([&](int r) {
    RankRunner& runner = *runners_[static_cast<std::size_t>(r)];
    runner.set_identity_experts(false);
    const cudaStream_t compute = states_[static_cast<std::size_t>(r)]->compute;
    for (std::size_t n = 0; n < per_pass * count; ++n) {
      const std::size_t p = order == PassOrder::INTERLEAVED ? n % count : n / per_pass;
      const std::size_t i = order == PassOrder::INTERLEAVED ? n / count : n % per_pass;
      EventTimeline& timeline = *timelines[p][static_cast<std::size_t>(r)];
      runner.configure(passes[p].kind, passes[p].mode);
      CUDA_CHECK(cudaDeviceSynchronize());
      if (r == 0) sampler.set_pass(p);
      barrier_->arrive_and_wait();  // every rank starts the iteration together
      timeline.record_start(i, compute);
      double& waited = world_.barrier_wait_ms[static_cast<std::size_t>(r)];
      const double waited_before = waited;
      run_iteration(r, passes[p].steps);
      timeline.record_end(i, compute);
      waits[p][i][static_cast<std::size_t>(r)] = waited - waited_before;
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    if (r == 0) sampler.set_pass(PassSampler::kNoPass);
    for (auto& ranks : timelines) ranks[static_cast<std::size_t>(r)]->synchronize(per_pass);
  });
  std::vector<PassTimes> result(count);
  const std::vector<PassSampler::Mean> nvml = sampler.means();
  for (std::size_t p = 0; p < count; ++p) {
    result[p].nvml = nvml[p];
    for (std::size_t i = static_cast<std::size_t>(config_.warmup); i < per_pass; ++i) {
      std::vector<double> per_rank;
      for (const auto& t : timelines[p]) per_rank.push_back(t->elapsed_ms(i));
      result[p].ms.push_back(per_rank);
      result[p].barrier_wait_ms.push_back(waits[p][i]);
    }
  }
  return result;
}

namespace {

// The profile's row name: the step without its layer ("ROUTED_EXPERTS", "wait dispatch", ...).
std::string profile_name(const Step& step) {
  switch (step.kind) {
    case StepKind::COMPUTE:
      return to_string(step.op);
    case StepKind::COLLECTIVE:
      return "launch " + to_string(step.comm);
    case StepKind::WAIT:
      return "wait " + to_string(step.comm);
    case StepKind::HOST_SYNC:
      return "host_sync";
  }
  return "?";
}

}  // namespace

OpProfile Stack::profile_ops(ScheduleKind kind, PassMode mode, const std::vector<Step>& steps, int rank,
                             int iterations) {
  const std::size_t n = steps.size();
  const auto total = static_cast<std::size_t>(config_.warmup + iterations);
  configure_timed(kind, mode);
  EventTimeline timeline(devices_[static_cast<std::size_t>(rank)], n * static_cast<std::size_t>(iterations));
  std::vector<double> host_ms(n * static_cast<std::size_t>(iterations), 0.0);
  on_every_rank([&](int r) {
    RankRunner& runner = *runners_[static_cast<std::size_t>(r)];
    const cudaStream_t compute = states_[static_cast<std::size_t>(r)]->compute;
    for (std::size_t i = 0; i < total; ++i) {
      CUDA_CHECK(cudaDeviceSynchronize());
      barrier_->arrive_and_wait();
      const bool profiled = r == rank && i >= static_cast<std::size_t>(config_.warmup);
      const std::size_t base = profiled ? (i - static_cast<std::size_t>(config_.warmup)) * n : 0;
      for (std::size_t s = 0; s < n; ++s) {
        if (profiled) timeline.record_start(base + s, compute);
        const auto begin = std::chrono::steady_clock::now();
        runner.execute(steps[s]);
        const auto end = std::chrono::steady_clock::now();
        if (profiled) {
          timeline.record_end(base + s, compute);
          host_ms[base + s] = std::chrono::duration<double, std::milli>(end - begin).count();
        }
      }
      runner.join();
    }
    CUDA_CHECK(cudaDeviceSynchronize());
  });
  OpProfile profile;
  profile.rank = rank;
  profile.iterations = iterations;
  std::map<std::string, std::size_t> row_of;
  std::vector<std::vector<double>> gpu_sums, host_sums;
  for (std::size_t s = 0; s < n; ++s) {
    const std::string name = profile_name(steps[s]);
    auto [it, added] = row_of.emplace(name, profile.entries.size());
    if (added) {
      profile.entries.push_back({name, 0, 0, 0});
      gpu_sums.emplace_back(static_cast<std::size_t>(iterations), 0.0);
      host_sums.emplace_back(static_cast<std::size_t>(iterations), 0.0);
    }
    ++profile.entries[it->second].count;
    for (std::size_t i = 0; i < static_cast<std::size_t>(iterations); ++i) {
      gpu_sums[it->second][i] += timeline.elapsed_ms(i * n + s);
      host_sums[it->second][i] += host_ms[i * n + s];
    }
  }
  for (std::size_t e = 0; e < profile.entries.size(); ++e) {
    profile.entries[e].gpu_ms = percentile(gpu_sums[e], 50);
    profile.entries[e].host_ms = percentile(host_sums[e], 50);
  }
  return profile;
}

namespace {

// PERMUTE → Dispatch → (identity) experts → Combine → UNPERMUTE, or in allreduce mode the local
// slots → experts → UNPERMUTE → MoE all-reduce.
std::vector<Step> data_path_steps(MoeComm mode) {
  const auto compute = [](Op op) { return Step{StepKind::COMPUTE, 0, op, Comm::DISPATCH}; };
  const auto comm = [](StepKind k, Comm c) { return Step{k, 0, Op::ATTN_NORM, c}; };
  if (mode == MoeComm::ALLTOALL)
    return {compute(Op::PERMUTE),
            comm(StepKind::COLLECTIVE, Comm::DISPATCH),
            comm(StepKind::WAIT, Comm::DISPATCH),
            compute(Op::ROUTED_EXPERTS),
            comm(StepKind::COLLECTIVE, Comm::COMBINE),
            comm(StepKind::WAIT, Comm::COMBINE),
            compute(Op::UNPERMUTE)};
  return {compute(Op::PERMUTE), compute(Op::ROUTED_EXPERTS), compute(Op::UNPERMUTE),
          comm(StepKind::COLLECTIVE, Comm::MOE_ALLREDUCE), comm(StepKind::WAIT, Comm::MOE_ALLREDUCE)};
}

// Output row i must be x_i·Σ_j w_ij (bf16 rows, fp32 sums: a few 2^-8 of the value); returns the
// first mismatch as text, "" when all match.
std::string compare_rows(const std::vector<std::int64_t>& tokens, const std::vector<float>& x,
                         const std::vector<float>& y, const std::vector<float>& slot_weight,
                         std::size_t top_k, std::size_t width, std::int64_t& checked) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    double weight = 0;
    for (std::size_t j = 0; j < top_k; ++j)
      weight += slot_weight[static_cast<std::size_t>(tokens[i]) * top_k + j];
    for (std::size_t c = 0; c < width; ++c) {
      const double ref = weight * x[i * width + c];
      const double got = y[i * width + c];
      ++checked;
      if (!(std::fabs(got - ref) <= 3e-2 * std::fabs(ref) + 1e-3))
        return "token " + std::to_string(tokens[i]) + " value " + std::to_string(c) + ": got " +
               std::to_string(got) + ", expected " + std::to_string(ref);
    }
  }
  return "";
}

}  // namespace

namespace {

// A check over every rank: `passed` when no rank reported a failure, else `failed_prefix` and the failures.
CheckResult rank_failures(const std::vector<std::string>& failures, const std::string& passed,
                          const std::string& failed_prefix) {
  std::string joined;
  for (const std::string& failure : failures)
    if (!failure.empty()) joined += (joined.empty() ? "" : "; ") + failure;
  return joined.empty() ? CheckResult{true, passed} : CheckResult{false, failed_prefix + joined};
}

}  // namespace

CheckResult Stack::check_data_path(Transport transport) {
  const bool alltoall = config_.comm == MoeComm::ALLTOALL;
  const ScheduleKind kind =
      transport == Transport::COPY_ENGINE ? ScheduleKind::FARSKIP_CE : ScheduleKind::REGULAR;
  const std::vector<Step> steps = data_path_steps(config_.comm);
  std::vector<std::string> failures(static_cast<std::size_t>(config_.gpus));
  std::vector<std::int64_t> checked(failures.size(), 0);
  on_every_rank([&](int r) {
    RankState& s = *states_[static_cast<std::size_t>(r)];
    RankRunner& runner = *runners_[static_cast<std::size_t>(r)];
    runner.configure(kind, PassMode::FULL);
    runner.set_identity_experts(true);
    const std::int64_t T = s.shape.tokens, H = s.shape.hidden;
    // allreduce: every rank holds the same batch, so the same input; alltoall: distinct per rank.
    const std::uint64_t seed = config_.seed + 4242u + (alltoall ? static_cast<std::uint64_t>(r) : 0u);
    fill_random(s.normed.get(), DataType::BF16, static_cast<std::size_t>(T * H), seed, 1.0f, s.compute);
    run_iteration(r, steps);
    CUDA_CHECK(cudaDeviceSynchronize());
    runner.set_identity_experts(false);
    std::vector<std::int64_t> tokens;
    for (int i = 0; i < 16; ++i) tokens.push_back(T * i / 16);
    tokens.push_back(T - 1);
    const std::string failure = compare_rows(
        tokens, rows_to_host(s.normed, tokens, H), rows_to_host(alltoall ? s.moe_out : s.r[0], tokens, H),
        s.host_slot_weight, static_cast<std::size_t>(s.shape.top_k), static_cast<std::size_t>(H),
        checked[static_cast<std::size_t>(r)]);
    if (!failure.empty()) failures[static_cast<std::size_t>(r)] = "rank " + std::to_string(r) + " " + failure;
  });
  const std::string name = transport == Transport::COPY_ENGINE ? "copy-engine" : "NCCL";
  const std::int64_t total = std::accumulate(checked.begin(), checked.end(), std::int64_t{0});
  return rank_failures(failures,
                       name + " identity-expert data path: " + std::to_string(total) +
                           " values on sampled tokens of every rank equal x·Σw",
                       name + " identity-expert data path wrong: ");
}

CheckResult Stack::check_grouped_experts() {
  std::vector<std::string> failures(static_cast<std::size_t>(config_.gpus));
  on_every_rank([&](int r) {
    failures[static_cast<std::size_t>(r)] =
        runners_[static_cast<std::size_t>(r)]->compare_grouped_with_loop();
  });
  return rank_failures(failures, "grouped expert GEMMs equal one GEMM per expert on every rank",
                       "grouped expert GEMMs differ from one GEMM per expert: ");
}

CheckResult Stack::check_finite(ScheduleKind kind, const std::vector<Step>& steps) {
  configure_timed(kind, PassMode::FULL);
  on_every_rank([&](int r) {
    run_iteration(r, steps);
    CUDA_CHECK(cudaDeviceSynchronize());
  });
  CheckResult result;
  std::int64_t bad = 0, total = 0;
  for (int r = 0; r < config_.gpus; ++r) {
    RankRunner& runner = *runners_[static_cast<std::size_t>(r)];
    CUDA_CHECK(cudaSetDevice(devices_[static_cast<std::size_t>(r)]));
    for (const DeviceBuffer* buffer : runner.final_outputs()) {
      const std::size_t count = static_cast<std::size_t>(config_.tokens * config_.model.hidden);
      std::vector<bf16_t> host(count);
      CUDA_CHECK(cudaMemcpy(host.data(), buffer->get(), count * 2, cudaMemcpyDeviceToHost));
      for (bf16_t v : host) bad += std::isfinite(bf16_to_float(v)) ? 0 : 1;
      total += static_cast<std::int64_t>(count);
    }
  }
  result.passed = bad == 0;
  result.detail = std::to_string(bad) + " of " + std::to_string(total) + " final hidden values are NaN/Inf";
  return result;
}

std::size_t Stack::memory_used_bytes() const {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaSetDevice(devices_.front()));
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return total_bytes - free_bytes;
}

}  // namespace moesim::kernels::layer
