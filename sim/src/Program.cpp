#include "moesim/sim/Program.hpp"

#include <algorithm>
#include <limits>

#include "moesim/common/Error.hpp"
#include "moesim/common/Limits.hpp"
#include "moesim/common/NumberText.hpp"

namespace moesim::sim {

std::size_t max_program_ops() {
  constexpr std::uint64_t kDefault = 10'000'000;
  constexpr std::uint64_t kLargest = std::numeric_limits<OpId>::max();  // ids are OpId
  return static_cast<std::size_t>(limit_from_env("MOESIM_MAX_OPS", kDefault, kLargest));
}

void check_op_count(double ops) {
  const std::size_t limit = max_program_ops();
  if (ops <= static_cast<double>(limit)) return;
  throw ScheduleError("the scenario needs " + format_number(ops) + " engine ops or more, past the " +
                      std::to_string(limit) +
                      " one simulation may hold (MOESIM_MAX_OPS, docs/limits.md): simulate fewer layers, "
                      "ranks or tokens, or raise the limit");
}

namespace {
std::vector<int> uniform_representatives(int world_size, bool symmetric) {
  std::vector<int> representative(static_cast<std::size_t>(std::max(world_size, 0)), 0);
  if (!symmetric) {
    for (int r = 0; r < world_size; ++r) representative[static_cast<std::size_t>(r)] = r;
  }
  return representative;
}
}  // namespace

// A one-rank world asked to be symmetric stays so (its results say "symmetric fast path").
Program::Program(int world_size, bool symmetric)
    : Program(world_size, uniform_representatives(world_size, symmetric)) {
  symmetric_ = symmetric;
}

Program::Program(int world_size, std::vector<int> representative)
    : world_size_(world_size),
      symmetric_(false),
      max_ops_(max_program_ops()),
      representative_(std::move(representative)) {
  if (world_size < 1) throw ScheduleError("program: world size must be >= 1");
  if (representative_.size() != static_cast<std::size_t>(world_size))
    throw ScheduleError("program: one representative per rank is needed");
  for (int r = 0; r < world_size; ++r) {
    const int rep = representative_[static_cast<std::size_t>(r)];
    if (rep < 0 || rep >= world_size || representative_[static_cast<std::size_t>(rep)] != rep)
      throw ScheduleError("program: rank " + std::to_string(r) + " mirrors a rank that is not simulated");
    if (rep == r) {
      simulated_ranks_.push_back(r);
    } else {
      symmetric_ = true;
    }
  }
  streams_.resize(static_cast<std::size_t>(world_size));
}

bool Program::is_simulated(int rank) const {
  return rank >= 0 && rank < world_size_ && representative_[static_cast<std::size_t>(rank)] == rank;
}

void Program::check_rank(int rank) const {
  if (!is_simulated(rank)) {
    throw ScheduleError("program: rank " + std::to_string(rank) + " is not simulated (world " +
                        std::to_string(world_size_) + (symmetric_ ? ", symmetric)" : ")"));
  }
}

void Program::set_streams(int rank, std::vector<std::string> names) {
  check_rank(rank);
  streams_[static_cast<std::size_t>(rank)] = std::move(names);
}

const std::vector<std::string>& Program::streams(int rank) const {
  return streams_.at(static_cast<std::size_t>(rank));
}

OpId Program::push(Op op) {
  check_rank(op.rank);
  if (op.kind != OpKind::HOST && op.is_host_launched() &&
      (op.stream < 0 || op.stream >= static_cast<int>(streams_[static_cast<std::size_t>(op.rank)].size()))) {
    throw ScheduleError("program: op '" + op.name + "' uses undeclared stream " + std::to_string(op.stream));
  }
  if (ops_.size() >= max_ops_) check_op_count(static_cast<double>(ops_.size()) + 1);
  const auto id = static_cast<OpId>(ops_.size());
  for (OpId d : op.deps) {
    if (d < 0 || d >= id) throw ScheduleError("program: op '" + op.name + "' depends on an op not yet added");
  }
  ops_.push_back(std::move(op));
  return id;
}

OpId Program::add_kernel(int rank, int stream, std::string name, std::string category, const KernelWork& work,
                         double launch_ns, std::vector<OpId> deps, OpOrigin origin) {
  if (work.compute_ns < 0 || work.memory_ns < 0 || work.fixed_ns < 0 || work.peak_ns < 0 ||
      work.hbm_bytes < 0 || !(work.sm_fraction > 0) || work.sm_fraction > 1 ||
      !(work.memory_comm_slowdown >= 1)) {
    throw ScheduleError("program: kernel '" + name +
                        "' has negative work, sm_fraction outside (0, 1] or memory_comm_slowdown below 1");
  }
  Op op;
  op.kind = OpKind::KERNEL;
  op.rank = rank;
  op.stream = stream;
  op.name = std::move(name);
  op.category = std::move(category);
  op.work = work;
  op.host_ns = launch_ns;
  op.deps = std::move(deps);
  op.origin = std::move(origin);
  return push(std::move(op));
}

int Program::add_collective(CollectiveSpec spec) {
  const auto n = spec.group.size();
  if (n == 0) throw ScheduleError("program: collective '" + spec.name + "' has an empty group");
  for (int r : spec.group) {
    if (r < 0 || r >= world_size_)
      throw ScheduleError("program: collective '" + spec.name + "' names a bad rank");
  }
  if (spec.kind == CollectiveKind::ALL_TO_ALL) {
    const PairBytes& pairs = spec.pairs();
    bool square = pairs.size() == n &&
                  std::all_of(pairs.begin(), pairs.end(), [n](const auto& row) { return row.size() == n; });
    if (!square) throw ScheduleError("program: all-to-all '" + spec.name + "' needs an n x n byte matrix");
  } else if (spec.bytes < 0) {
    throw ScheduleError("program: collective '" + spec.name + "' has negative bytes");
  }
  if (spec.sms < 0) throw ScheduleError("program: collective '" + spec.name + "' holds negative SMs");
  auto& index = group_index_.emplace_back();
  for (std::size_t i = 0; i < n; ++i) index.emplace_back(spec.group[i], static_cast<int>(i));
  std::sort(index.begin(), index.end());
  collectives_.push_back(std::move(spec));
  members_.emplace_back();
  return static_cast<int>(collectives_.size()) - 1;
}

int Program::group_index(int c, int rank) const {
  const auto& index = group_index_.at(static_cast<std::size_t>(c));
  auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(rank, -1));
  return it != index.end() && it->first == rank ? it->second : -1;
}

OpId Program::add_collective_member(int collective, int rank, int stream, std::string category,
                                    double launch_ns, std::vector<OpId> deps, OpOrigin origin) {
  const auto& spec = collectives_.at(static_cast<std::size_t>(collective));
  if (group_index(collective, rank) < 0) {
    throw ScheduleError("program: rank " + std::to_string(rank) + " is not in collective '" + spec.name +
                        "'");
  }
  Op op;
  op.kind = OpKind::COLLECTIVE;
  op.rank = rank;
  op.stream = stream;
  op.name = spec.name;
  op.category = std::move(category);
  op.collective = collective;
  op.host_ns = launch_ns;
  op.deps = std::move(deps);
  op.origin = std::move(origin);
  OpId id = push(std::move(op));
  members_[static_cast<std::size_t>(collective)].push_back(id);
  return id;
}

OpId Program::add_host_op(int rank, std::string name, std::string category, double host_ns,
                          std::vector<OpId> deps, OpOrigin origin) {
  Op op;
  op.kind = OpKind::HOST;
  op.rank = rank;
  op.name = std::move(name);
  op.category = std::move(category);
  op.host_ns = host_ns;
  op.deps = std::move(deps);
  op.origin = std::move(origin);
  return push(std::move(op));
}

OpId Program::add_transfer(int src, int dst, std::string name, std::string category, double bytes,
                           Transport transport, double latency_ns, std::vector<OpId> deps, OpOrigin origin,
                           int display_stream) {
  check_rank(dst);
  if (!(bytes >= 0) || !(latency_ns >= 0))
    throw ScheduleError("program: transfer '" + name + "' has negative bytes or latency");
  Op op;
  op.kind = OpKind::TRANSFER;
  op.rank = src;
  op.stream = display_stream;
  op.dst_rank = dst;
  op.name = std::move(name);
  op.category = std::move(category);
  op.bytes = bytes;
  op.transport = transport;
  op.latency_ns = latency_ns;
  op.deps = std::move(deps);
  op.origin = std::move(origin);
  return push(std::move(op));
}

OpId Program::add_pool(int rank, int stream, std::string name, std::string category, int sms, int processors,
                       double launch_ns, std::vector<OpId> deps, OpOrigin origin) {
  if (processors < 1 || sms < processors)
    throw ScheduleError("program: pool '" + name + "' needs 1 <= processors <= sms");
  Op op;
  op.kind = OpKind::POOL;
  op.rank = rank;
  op.stream = stream;
  op.name = std::move(name);
  op.category = std::move(category);
  op.pool_sms = sms;
  op.processors = processors;
  op.host_ns = launch_ns;
  op.deps = std::move(deps);
  op.origin = std::move(origin);
  return push(std::move(op));
}

OpId Program::add_task(OpId pool, std::string name, std::string category, double duration_ns,
                       std::vector<OpId> deps, OpOrigin origin) {
  if (pool < 0 || pool >= static_cast<OpId>(ops_.size()) ||
      ops_[static_cast<std::size_t>(pool)].kind != OpKind::POOL)
    throw ScheduleError("program: task '" + name + "' names no pool");
  if (!(duration_ns >= 0)) throw ScheduleError("program: task '" + name + "' has a negative duration");
  Op op;
  op.kind = OpKind::TASK;
  op.rank = ops_[static_cast<std::size_t>(pool)].rank;
  op.name = std::move(name);
  op.category = std::move(category);
  op.pool = pool;
  op.task_ns = duration_ns;
  op.deps = std::move(deps);
  op.origin = std::move(origin);
  return push(std::move(op));
}

void Program::add_dependency(OpId op, OpId must_finish_first) {
  if (op < 0 || op >= static_cast<OpId>(ops_.size()) || must_finish_first < 0 ||
      must_finish_first >= static_cast<OpId>(ops_.size()) || op == must_finish_first) {
    throw ScheduleError("program: bad dependency");
  }
  ops_[static_cast<std::size_t>(op)].deps.push_back(must_finish_first);
}

void Program::validate() const {
  for (std::size_t c = 0; c < collectives_.size(); ++c) {
    const auto& spec = collectives_[c];
    std::size_t expected = 0;
    for (int r : spec.group) expected += is_simulated(r) ? 1 : 0;
    if (members_[c].size() != expected) {
      throw ScheduleError("program: collective '" + spec.name + "' has " +
                          std::to_string(members_[c].size()) + " members added, expected " +
                          std::to_string(expected));
    }
  }
}

}  // namespace moesim::sim
