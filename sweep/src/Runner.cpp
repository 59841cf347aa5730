#include "moesim/sweep/Runner.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
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

/**
 * What the workers share. It is owned jointly by the workers and run_sweep, so that workers left running
 * after an interrupt (see run_sweep) touch nothing that run_sweep's caller may already have destroyed:
 * they hold copies of the points and of the runner, and they reach the caller's stop flag, log, progress
 * stream and summary only under `lock` while `abandoned` is false.
 */
struct Shared {
  std::vector<Point> todo;
  PointRunner run;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stopping{false};
  std::mutex lock;
  std::condition_variable changed;
  bool abandoned = false;
  std::size_t running = 0;
  std::size_t workers_left = 0;
  std::exception_ptr error;  // the first row that could not be written
};

void work(const std::shared_ptr<Shared>& shared, const std::atomic<bool>& stop, ResultLog& log,
          RunSummary& summary, std::ostream& progress, bool tty,
          std::chrono::steady_clock::time_point start) {
  Shared& s = *shared;
  for (;;) {
    const std::size_t i = s.next.fetch_add(1);
    {
      std::lock_guard<std::mutex> hold(s.lock);
      if (s.abandoned || s.stopping.load() || stop.load() || i >= s.todo.size()) break;
      ++s.running;
    }
    Row row = s.run(s.todo[i]);
    std::lock_guard<std::mutex> hold(s.lock);
    --s.running;
    if (s.abandoned) break;
    try {
      log.append(row);
    } catch (...) {
      if (!s.error) s.error = std::current_exception();
      s.stopping.store(true);
      break;
    }
    ++summary.ran;
    summary.failed += row.ok ? 0 : 1;
    const std::size_t done = summary.skipped + summary.ran;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta =
        elapsed / static_cast<double>(summary.ran) * static_cast<double>(s.todo.size() - summary.ran);
    if (tty) {
      progress << bar(done, summary.total, eta) << std::flush;
    } else {
      progress << "# " << done << "/" << summary.total << " " << row.id << (row.ok ? "" : " (error)") << "\n";
    }
    s.changed.notify_all();
  }
  std::lock_guard<std::mutex> hold(s.lock);
  --s.workers_left;
  s.changed.notify_all();
}

}  // namespace

RunSummary run_sweep(const std::vector<Point>& points, int jobs, const PointRunner& run, ResultLog& log,
                     const std::atomic<bool>& stop, std::ostream& progress, bool tty,
                     std::chrono::milliseconds grace) {
  RunSummary summary;
  summary.total = points.size();
  auto shared = std::make_shared<Shared>();
  shared->run = run;
  for (const auto& p : points) {
    if (log.finished().count(p.id)) {
      ++summary.skipped;
    } else {
      shared->todo.push_back(p);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::size_t threads = static_cast<std::size_t>(std::max(1, jobs));
  shared->workers_left = threads;
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back(work, shared, std::cref(stop), std::ref(log), std::ref(summary), std::ref(progress),
                      tty, start);

  std::unique_lock<std::mutex> hold(shared->lock);
  // Poll the caller's flag: a signal handler may only set it, it cannot notify.
  while (shared->workers_left > 0 && !stop.load())
    shared->changed.wait_for(hold, std::chrono::milliseconds(20));
  if (stop.load()) {
    // Interrupted: no point starts any more; the running ones get `grace` to finish and be written.
    shared->stopping.store(true);
    shared->changed.wait_for(hold, grace, [&] { return shared->workers_left == 0; });
  }
  if (shared->workers_left > 0 && stop.load()) {
    // Points still inside their simulation are left behind: nothing they finish is written any more.
    shared->abandoned = true;
    summary.abandoned = shared->running;
    hold.unlock();
    for (auto& t : pool) t.detach();
  } else {
    hold.unlock();
    for (auto& t : pool) t.join();
  }
  if (tty) progress << "\n";
  if (shared->error) std::rethrow_exception(shared->error);
  summary.interrupted = stop.load() && summary.skipped + summary.ran < summary.total;
  return summary;
}

}  // namespace moesim::sweep
