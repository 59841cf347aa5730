// libFuzzer entry: the target named by MOESIM_FUZZ_TARGET (MOESIM_FUZZ_TARGET=list prints them).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "FuzzTargets.hpp"

namespace {
const moesim::fuzz::FuzzTarget* g_target = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("MOESIM_FUZZ_TARGET");
  if (name != nullptr && std::string(name) == "list") {
    for (const auto& target : moesim::fuzz::fuzz_targets()) std::printf("%s\n", target.name);
    std::exit(0);
  }
  g_target = name == nullptr ? nullptr : moesim::fuzz::find_fuzz_target(name);
  if (g_target == nullptr) {
    std::fprintf(stderr,
                 "moesim_fuzz: set MOESIM_FUZZ_TARGET to a target (MOESIM_FUZZ_TARGET=list names them)\n");
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  moesim::fuzz::run_fuzz_target(*g_target, std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
