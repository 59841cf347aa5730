// Per-rank row bookkeeping of the routed-expert data path (see Routing.hpp).
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "Routing.hpp"

namespace moesim::kernels::layer {
namespace {

std::vector<std::int64_t> prefix(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> offset(counts.size(), 0);
  for (std::size_t i = 1; i < counts.size(); ++i) offset[i] = offset[i - 1] + counts[i - 1];
  return offset;
}

// Slots sorted by expert (stable, so tokens keep their order inside an expert).
std::vector<int> slots_by_expert(const TokenRouting& routing) {
  std::vector<int> order(routing.expert.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return routing.expert[static_cast<std::size_t>(a)] < routing.expert[static_cast<std::size_t>(b)];
  });
  return order;
}

void send_side(AlltoallPlan& plan, const TokenRouting& routing, const std::vector<std::int64_t>& counts,
               int top_k, int per_rank) {
  const std::vector<int> order = slots_by_expert(routing);
  plan.permute_source.resize(order.size());
  plan.slot_position.resize(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) {
    plan.permute_source[p] = order[p] / top_k;
    plan.slot_position[static_cast<std::size_t>(order[p])] = static_cast<int>(p);
  }
  plan.slot_weight = routing.weight;
  const std::size_t ranks = counts.size() / static_cast<std::size_t>(per_rank);
  plan.send_rows.assign(ranks, 0);
  for (std::size_t e = 0; e < counts.size(); ++e)
    plan.send_rows[e / static_cast<std::size_t>(per_rank)] += counts[e];
  plan.send_offset = prefix(plan.send_rows);
}

void receive_side(AlltoallPlan& plan, const std::vector<std::vector<std::int64_t>>& matrix, int rank,
                  int per_rank) {
  const std::size_t ranks = matrix.size();
  const auto first = static_cast<std::size_t>(rank * per_rank);
  plan.recv_rows.assign(ranks, 0);
  plan.expert_rows.assign(static_cast<std::size_t>(per_rank), 0);
  for (std::size_t s = 0; s < ranks; ++s) {
    for (std::size_t le = 0; le < static_cast<std::size_t>(per_rank); ++le) {
      plan.recv_rows[s] += matrix[s][first + le];
      plan.expert_rows[le] += matrix[s][first + le];
    }
  }
  plan.recv_offset = prefix(plan.recv_rows);
  plan.recv_total = std::accumulate(plan.recv_rows.begin(), plan.recv_rows.end(), std::int64_t{0});
  // Source s's block holds its rows for our experts in expert order.
  plan.regroup_source.clear();
  plan.regroup_source.reserve(static_cast<std::size_t>(plan.recv_total));
  std::vector<std::int64_t> within(ranks, 0);  // rows of s's block already passed
  for (std::size_t le = 0; le < static_cast<std::size_t>(per_rank); ++le) {
    for (std::size_t s = 0; s < ranks; ++s) {
      const std::int64_t rows = matrix[s][first + le];
      for (std::int64_t m = 0; m < rows; ++m)
        plan.regroup_source.push_back(static_cast<int>(plan.recv_offset[s] + within[s] + m));
      within[s] += rows;
    }
  }
  plan.ungroup_source.assign(plan.regroup_source.size(), 0);
  for (std::size_t q = 0; q < plan.regroup_source.size(); ++q)
    plan.ungroup_source[static_cast<std::size_t>(plan.regroup_source[q])] = static_cast<int>(q);
}

}  // namespace

std::vector<AlltoallPlan> plan_alltoall(const std::vector<TokenRouting>& routing, int experts, int top_k) {
  const int ranks = static_cast<int>(routing.size());
  if (ranks == 0 || experts % ranks != 0)
    throw std::invalid_argument("experts must divide over the EP ranks");
  const int per_rank = experts / ranks;
  const auto matrix = tokens_to_expert(routing, experts);
  std::vector<AlltoallPlan> plans(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    AlltoallPlan& plan = plans[static_cast<std::size_t>(r)];
    send_side(plan, routing[static_cast<std::size_t>(r)], matrix[static_cast<std::size_t>(r)], top_k,
              per_rank);
    receive_side(plan, matrix, r, per_rank);
  }
  return plans;
}

std::vector<AllreducePlan> plan_allreduce(const TokenRouting& routing, int experts, int top_k, int ranks) {
  if (ranks <= 0 || experts % ranks != 0)
    throw std::invalid_argument("experts must divide over the EP ranks");
  const int per_rank = experts / ranks;
  std::vector<AllreducePlan> plans(static_cast<std::size_t>(ranks));
  for (AllreducePlan& plan : plans) {
    plan.slot_position.assign(routing.expert.size(), -1);
    plan.slot_weight = routing.weight;
    plan.expert_rows.assign(static_cast<std::size_t>(per_rank), 0);
  }
  for (int slot : slots_by_expert(routing)) {
    const int expert = routing.expert[static_cast<std::size_t>(slot)];
    AllreducePlan& plan = plans[static_cast<std::size_t>(expert / per_rank)];
    plan.slot_position[static_cast<std::size_t>(slot)] = static_cast<int>(plan.permute_source.size());
    plan.permute_source.push_back(slot / top_k);
    ++plan.expert_rows[static_cast<std::size_t>(expert % per_rank)];
  }
  return plans;
}

}  // namespace moesim::kernels::layer
