// File output shared by the subcommands: plain writes (or stdout) and never-overwriting creation.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "Commands.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::app {

void write_text(const std::string& path, const std::string& what,
                const std::function<void(std::ostream&)>& body) {
  if (path == "-") {
    body(std::cout);
    return;
  }
  std::ofstream out(path);
  if (!out) throw ConfigError(path, "", "cannot be opened for writing the " + what);
  body(out);
  if (!out) throw ConfigError(path, "", "could not be written");
}

std::string write_new_file(const std::string& path, const std::string& text) {
  for (int suffix = 0; suffix < 1000; ++suffix) {
    const std::string name = suffix == 0 ? path : path + "." + std::to_string(suffix);
    std::FILE* file = std::fopen(name.c_str(), "wx");
    if (file == nullptr) {
      if (errno == EEXIST) continue;
      throw ConfigError(name, "", std::string("cannot create: ") + std::strerror(errno));
    }
    const bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
    if (std::fclose(file) != 0 || !ok) throw ConfigError(name, "", "write failed");
    return name;
  }
  throw ConfigError(path, "", "exists, and so do " + path + ".1 ... .999");
}

}  // namespace moesim::app
