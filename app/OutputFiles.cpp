// File output shared by the subcommands: atomic writes (or stdout) and never-overwriting creation.
#include <iostream>

#include "Commands.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/OutputFile.hpp"

namespace moesim::app {

void write_text(const std::string& path, const std::string& what,
                const std::function<void(std::ostream&)>& body) {
  if (path == "-") {
    body(std::cout);
    std::cout.flush();
    if (!std::cout) throw ConfigError("<stdout>", "", "could not be written (the " + what + ")");
    return;
  }
  write_file_atomically(path, body);
}

std::string write_new_file(const std::string& path, const std::string& text) {
  return write_new_file_atomically(path, [&](std::ostream& out) { out << text; });
}

}  // namespace moesim::app
