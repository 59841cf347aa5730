// `--engine simgrid`: one SimGrid engine per run, configured for RDMA/NVLink, silent unless asked.
#include <xbt/log.h>
#include <simgrid/s4u.hpp>

#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>

#include "../Simulation.hpp"
#include "SimGridNetwork.hpp"

namespace moesim::sim::detail {

namespace sg4 = simgrid::s4u;

namespace {

/*
 * SimGrid's configuration is process-wide and fixed once its first engine has run:
 *   - LV08 with its TCP corrections off (latency factor 1, bandwidth factor 1, no reverse ACK traffic,
 *     weight-S 0), which leaves plain max-min sharing of every link by the comms that cross it;
 *   - event times compared to 1 ps (SimGrid's default, 1 ns, is the engine's whole time step);
 *   - its log silent unless MOESIM_SIMGRID_LOG names a threshold (e.g. "info"): SimGrid must not
 *     write to a report's stdout or stderr.
 * Sanitizer builds switch actors with threads: ASan cannot follow SimGrid's own stack switching.
 */
void configure_once() {
  static const bool configured = [] {
    const char* log = std::getenv("MOESIM_SIMGRID_LOG");
    const std::string threshold = log != nullptr && *log != '\0' ? log : "critical";
    xbt_log_control_set(("root.thresh:" + threshold).c_str());
    sg4::Engine::set_config("network/model:LV08");
    sg4::Engine::set_config("network/latency-factor:1");
    sg4::Engine::set_config("network/bandwidth-factor:1");
    sg4::Engine::set_config("network/crosstraffic:0");
    sg4::Engine::set_config("network/weight-S:0");
    sg4::Engine::set_config("surf/precision:1e-12");
#if defined(__SANITIZE_ADDRESS__)
    sg4::Engine::set_config("contexts/factory:thread");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    sg4::Engine::set_config("contexts/factory:thread");
#endif
#endif
    return true;
  }();
  (void)configured;
}

}  // namespace

RunResult run_on_simgrid(const Platform& platform, const Program& program, const JitterSpec& jitter) {
  static std::mutex one_engine;  // SimGrid has one engine per process
  const std::lock_guard<std::mutex> lock(one_engine);
  int argc = 1;
  std::string name = "moesim";
  char* argv[] = {name.data(), nullptr};
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  configure_once();
  RunResult result;
  std::exception_ptr error;
  {
    SimGridNetwork network(platform);
    Simulation simulation(platform, program, jitter, &network);
    sg4::Actor::create("moesim", sg4::Host::by_name("gpu0"), [&] {
      try {
        result = simulation.run();
      } catch (...) {
        error = std::current_exception();
      }
    });
    engine->run();
  }
  engine.reset();
  if (error) std::rethrow_exception(error);
  return result;
}

}  // namespace moesim::sim::detail
