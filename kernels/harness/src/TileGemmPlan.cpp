#include "moesim/kernels/TileGemmPlan.hpp"

#include <stdexcept>
#include <string>

namespace moesim::kernels {

std::int64_t padded_rows(std::int64_t tokens, int bm) {
  return (tokens + bm - 1) / bm * bm;
}

TileGemmPlan TileGemmPlan::for_tokens(std::int64_t tokens, std::int64_t n, std::int64_t k,
                                      TileConfig config) {
  if (tokens < 1)
    throw std::invalid_argument("tile GEMM: tokens must be >= 1, not " + std::to_string(tokens));
  if (n < config.bn || n % config.bn != 0)
    throw std::invalid_argument("tile GEMM: N = " + std::to_string(n) +
                                " is not a multiple of bN = " + std::to_string(config.bn));
  if (k < config.bk || k % config.bk != 0)
    throw std::invalid_argument("tile GEMM: K = " + std::to_string(k) +
                                " is not a multiple of bK = " + std::to_string(config.bk));
  TileGemmPlan plan;
  plan.config = config;
  plan.m = padded_rows(tokens, config.bm);
  plan.n = n;
  plan.k = k;
  return plan;
}

std::int64_t tasks_of_block(std::int64_t tasks, std::int64_t blocks, std::int64_t block) {
  if (block >= tasks) return 0;
  return (tasks - block + blocks - 1) / blocks;
}

std::int64_t task_waves(std::int64_t tasks, std::int64_t blocks) {
  return (tasks + blocks - 1) / blocks;
}

double ns_per_task(double seconds, std::int64_t blocks, std::int64_t tasks) {
  return tasks > 0 ? seconds * 1e9 * static_cast<double>(blocks) / static_cast<double>(tasks) : 0.0;
}

}  // namespace moesim::kernels
