// The provenance of a calibrated profile: which runs, logs and traces it came from, on what GPU and stack.
#include <map>
#include <set>

#include "CalibrationContext.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate::detail {

void check_same_gpu(Context& c) {
  for (const RunInfo& r : c.in.bench.runs) {
    if (r.sm_count > 0 && r.sm_count != c.base.gpu.sm_count) {
      throw ConfigError(r.file, "/gpus/0/multiprocessors",
                        "= " + std::to_string(r.sm_count) + ": measured on " + r.gpu_name +
                            ", but the base profile '" + c.base.name + "' describes " + c.base.gpu.name +
                            " with " + std::to_string(c.base.gpu.sm_count) + " SMs");
    }
  }
}

void set_provenance(Context& c) {
  hw::Provenance& p = c.out.profile.provenance;
  p.kind = hw::ProvenanceKind::CALIBRATED;
  std::set<std::string> dates, drivers;
  std::map<std::string, std::string> libraries;
  std::string device;
  int most_gpus = 0;
  for (const RunInfo& r : c.in.bench.runs) {
    std::string what = r.benchmark + " on " + std::to_string(r.gpu_count) + "x " + r.gpu_name;
    if (!r.start_time.empty()) what += ", " + r.start_time;
    c.tags.tag(r.file, what);
    if (r.start_time.size() >= 10) dates.insert(r.start_time.substr(0, 10));
    if (!r.driver.empty()) {
      std::string d = r.driver + " (" + (r.gpu_api.empty() ? "driver" : r.gpu_api) + " driver API " +
                      r.driver_api + ", runtime " + r.runtime + ")";
      drivers.insert(d);
    }
    for (const auto& [name, version] : r.libraries) libraries[name] = version;
    if (r.gpu_count > most_gpus && !r.gpu_name.empty()) {
      most_gpus = r.gpu_count;
      device = std::to_string(r.gpu_count) + "x " + r.gpu_name;
      if (!r.gpu_arch.empty() || r.sm_count > 0)
        device += " (" + r.gpu_arch + (r.gpu_arch.empty() ? "" : ", ") + std::to_string(r.sm_count) + " SMs)";
    }
  }
  for (const NcclTestsLog& log : c.in.nccl_tests) {
    c.tags.tag(log.file, (log.program.empty() ? log.op : log.program) + " log on " +
                             std::to_string(log.ranks) + "x " + (log.device.empty() ? "GPU" : log.device) +
                             " (" + std::to_string(log.hosts) + " host" + (log.hosts > 1 ? "s" : "") + ")" +
                             (log.version.empty() ? "" : ", " + log.version));
    if (!log.version.empty())
      libraries[log.version.substr(0, log.version.find(' '))] = log.version.substr(log.version.find(' ') + 1);
    if (device.empty() && !log.device.empty()) device = std::to_string(log.ranks) + "x " + log.device;
  }
  for (const KinetoTrace& t : c.in.traces) c.tags.tag(t.file, "PyTorch profiler (Kineto) trace");
  auto join = [](const std::set<std::string>& items) {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : "; ") + s;
    return out;
  };
  p.date = dates.empty() ? "undated (no kernels/ results file among the inputs)" : join(dates);
  p.device = device.empty() ? "not recorded by the inputs" : device;
  p.driver = drivers.empty() ? "not recorded by the inputs" : join(drivers);
  std::string libs;
  for (const auto& [name, version] : libraries) libs += (libs.empty() ? "" : ", ") + name + " " + version;
  p.libraries = libs.empty() ? "not recorded by the inputs" : libs;
}

}  // namespace moesim::calibrate::detail
