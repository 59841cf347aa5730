#include "BenchSupport.hpp"

#include <fstream>
#include <sstream>

namespace moesim::bench {

bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    double kib = 0;
    fields >> kib;
    return kib / 1024.0;
  }
  return 0;
}

std::string bench_dir() {
  return MOESIM_BENCH_DIR;
}

}  // namespace moesim::bench
