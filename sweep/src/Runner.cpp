#include "moesim/sweep/Runner.hpp"

#include <chrono>
#include <mutex>
#include <string>
#include <thread>

namespace moesim::sweep {

namespace {
std::string bar(std::size_t done, std::size_t total, double eta_s) {
  const int width = 30;
  int filled = total ? static_cast<int>(width * done / total) : width;
  std::string out = "\r[" + std::string(static_cast<std::size_t>(filled), '=') +
                    std::string(static_cast<std::size_t>(width - filled), ' ') + "] " + std::to_string(done) +
                    "/" + std::to_string(total);
  if (eta_s >= 0) out += "  ETA " + std::to_string(static_cast<long>(eta_s + 0.5)) + " s ";
  return out;
}
}  // namespace

RunSummary run_sweep(const std::vector<Point>& points, int jobs, const PointRunner& run, ResultLog& log,
                     const std::atomic<bool>& stop, std::ostream& progress, bool tty) {
  RunSummary summary;
  summary.total = points.size();
  std::vector<const Point*> todo;
  for (const auto& p : points) {
    if (log.finished().count(p.id)) {
      ++summary.skipped;
    } else {
      todo.push_back(&p);
    }
  }
  std::atomic<std::size_t> next{0};
  std::mutex report;
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    while (!stop.load()) {
      std::size_t i = next.fetch_add(1);
      if (i >= todo.size()) return;
      Row row = run(*todo[i]);
      log.append(row);
      std::lock_guard<std::mutex> lock(report);
      ++summary.ran;
      summary.failed += row.ok ? 0 : 1;
      const std::size_t done = summary.skipped + summary.ran;
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double eta =
          elapsed / static_cast<double>(summary.ran) * static_cast<double>(todo.size() - summary.ran);
      if (tty) {
        progress << bar(done, summary.total, eta) << std::flush;
      } else {
        progress << "# " << done << "/" << summary.total << " " << row.id << (row.ok ? "" : " (error)")
                 << "\n";
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, jobs); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (tty) progress << "\n";
  summary.interrupted = stop.load() && summary.skipped + summary.ran < summary.total;
  return summary;
}

}  // namespace moesim::sweep
