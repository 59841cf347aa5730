// moesim: what-if simulation of communication/computation overlap in distributed MoE models.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "Commands.hpp"
#include "moesim/common/Error.hpp"

namespace {

/** Errors print on one line: control characters from the input become '?' and a runaway text is cut. */
std::string one_line(const std::string& text) {
  constexpr std::size_t kMaxLength = 2000;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMaxLength; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += c < 0x20 || c == 0x7f ? '?' : text[i];
  }
  return text.size() > kMaxLength ? out + "..." : out;
}

int fail(const char* kind, const std::string& message, int code) {
  std::cerr << "moesim: " << kind << ": " << one_line(message) << "\n";
  return code;
}

/** Whatever printed to stdout must have reached it (a full disk, a closed pipe): else exit 1. */
int checked_stdout(int code) {
  errno = 0;
  std::cout.flush();
  if (std::cout) return code;
  return fail("error",
              std::string("standard output could not be written: ") +
                  (errno != 0 ? std::strerror(errno) : "write error"),
              code == 0 ? 1 : code);
}

}  // namespace

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
    return checked_stdout(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return checked_stdout(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return checked_stdout(app.exit(e));
  } catch (const CLI::ParseError& e) {
    return fail("error", std::string(e.what()) + " (see moesim --help)", 2);
  }
  try {
    return checked_stdout(action());
  } catch (const moesim::ConfigError& e) {
    return fail("error", e.what(), 2);
  } catch (const moesim::ScheduleError& e) {
    return fail("error", e.what(), 2);
  } catch (const std::bad_alloc&) {
    return fail("error", "out of memory: the scenario is too large for this machine (docs/limits.md)", 1);
  } catch (const std::exception& e) {
    return fail("internal error", e.what(), 1);
  }
}
