// contention.memory_slowdown_with_comm of a calibrated profile from contention_bench's RMSNorm runs.
#include <algorithm>
#include <set>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"
#include "moesim/calibrate/Fitting.hpp"

namespace moesim::calibrate::detail {

/*
 * The layer runner's RMSNorm beside NCCL collectives (contention_bench --compute rmsnorm) stands for the
 * layer's memory-bound kernels: it runs below the HBM peak, so HBM sharing alone leaves it at full speed,
 * yet it slows beside every collective measured. memory_slowdown_with_comm = geometric mean of its
 * slowdown (time beside the collective / time alone) over the NCCL cases, at least 1; the engine applies it
 * to memory time and keeps HBM sharing, so the larger of the two stretches wins.
 */
void fit_memory_kernels(Context& c) {
  hw::ContentionSpec& spec = c.out.profile.contention;
  std::vector<const ContentionCase*> cases;
  std::vector<double> slowdowns;
  std::set<std::string> files;
  for (const ContentionCase& k : c.in.bench.contention) {
    if (k.compute != "rmsnorm" || !beside_nccl(k)) continue;
    cases.push_back(&k);
    slowdowns.push_back(*k.compute_with_comm_s / k.compute_alone_s);
    files.insert(k.file);
  }
  if (cases.empty()) return;
  spec.memory_slowdown_with_comm = round4(std::max(1.0, geometric_mean(slowdowns)));
  ErrorSummary e;
  for (const ContentionCase* k : cases)
    e.add(k->compute_alone_s * spec.memory_slowdown_with_comm, *k->compute_with_comm_s);
  spec.source += " memory_slowdown_with_comm = " + num(spec.memory_slowdown_with_comm, 4) +
                 ": geometric mean of the layer runner's RMSNorm slowdown beside NCCL over " +
                 std::to_string(cases.size()) + " cases " + c.tags.tags_of(files) + " (" +
                 range_text(slowdowns) +
                 "), which runs below the HBM peak and slows all the same; the engine stretches the memory "
                 "time of the layer's memory-bound kernels by it while an SM-driven collective runs.";
  add_residual(c, "contention memory kernels", e, "RMSNorm beside NCCL vs alone x memory_slowdown_with_comm");
  c.calibrated_parts.push_back("memory-kernel contention");
}

}  // namespace moesim::calibrate::detail
