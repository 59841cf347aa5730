// moesim: what-if simulation of communication/computation overlap in distributed MoE models.
#include <fmt/format.h>

#include <iostream>

#include "Commands.hpp"
#include "moesim/common/Error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"moesim: simulate MoE layer schedules (regular, FarSkip, ...) on calibrated GPU clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("moesim ") + MOESIM_VERSION + " (" + MOESIM_GIT_SHA + ")");
  moesim::app::Invocation invocation;
  for (int i = 0; i < argc; ++i) invocation.args.emplace_back(argv[i]);
  moesim::app::Action action;
  moesim::app::add_simulate(app, invocation, action);
  moesim::app::add_list(app, action);
  moesim::app::add_sweep(app, action);
  moesim::app::add_validate(app, invocation, action);
  moesim::app::add_calibrate(app, action);
  moesim::app::add_bench(app, invocation, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "moesim: error: " << e.what() << " (see moesim --help)\n";
    return 2;
  }
  try {
    return action();
  } catch (const moesim::ConfigError& e) {
    std::cerr << "moesim: error: " << e.what() << "\n";
    return 2;
  } catch (const moesim::ScheduleError& e) {
    std::cerr << "moesim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "moesim: internal error: " << e.what() << "\n";
    return 1;
  }
}
