#include "moesim/common/DataRoot.hpp"

#include <cstdlib>

#ifndef MOESIM_DEFAULT_DATA_DIR
#error "common/CMakeLists.txt must define MOESIM_DEFAULT_DATA_DIR"
#endif

namespace moesim {

std::filesystem::path data_root() {
  const char* from_environment = std::getenv("MOESIM_DATA_DIR");
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  return MOESIM_DEFAULT_DATA_DIR;
}

}  // namespace moesim
