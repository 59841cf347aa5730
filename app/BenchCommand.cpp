// `moesim bench`: run the kernels/ GPU microbenchmarks of this build and merge their JSON results.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "Commands.hpp"
#include "moesim/calibrate/BenchSuites.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"

namespace moesim::app {

namespace {

namespace fs = std::filesystem;

struct BenchOptions {
  std::string suites = "gemm,grouped_gemm,attention,memory,collectives,contention,launch,power";
  std::string out;
  std::string kernels_dir = MOESIM_KERNELS_BUILD_DIR;
  int gpus = 8;
  bool torch = true;
  std::string layer_model = "qwen3-30b-a3b";
};

// --layer-model: a file as given, else a shipped spec of this source tree.
std::string layer_model_file(const std::string& model) {
  if (fs::exists(model)) return model;
  const fs::path shipped = fs::path(MOESIM_SOURCE_DIR) / "models" / "specs" / (model + ".json");
  if (!fs::exists(shipped)) {
    throw ConfigError("", "--layer-model",
                      "'" + model + "' is neither a file nor a shipped model (moesim list models)");
  }
  return shipped.string();
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string quote(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

// The folder that holds the built benchmarks: the CUDA build puts them in kernels/, the HIP sub-build in
// kernels/hip.
fs::path find_programs(const fs::path& dir) {
  for (const fs::path& candidate : {dir, dir / "hip"}) {
    if (fs::exists(candidate / "launch_bench")) return candidate;
  }
  return {};
}

// The folder of the built benchmarks, with every program the chosen suites need.
fs::path checked_programs(const BenchOptions& o, const std::vector<calibrate::BenchStep>& steps) {
  const std::string backend = MOESIM_GPU_BACKEND_SETTING;
  const fs::path programs = find_programs(o.kernels_dir);
  if (programs.empty()) {
    if (backend == "OFF" && o.kernels_dir == MOESIM_KERNELS_BUILD_DIR) {
      throw ConfigError("moesim bench", "",
                        "this build has no GPU benchmarks (MOESIM_GPU_BACKEND=OFF); configure with "
                        "-DMOESIM_GPU_BACKEND=CUDA (or HIP) and build again, or pass --kernels-dir with a "
                        "kernels/ build (cmake -S kernels -B build-kernels -DMOESIM_GPU_BACKEND=CUDA)");
    }
    throw ConfigError(
        o.kernels_dir, "",
        "no benchmark programs here (launch_bench missing): build them (cmake --build ...) with "
        "-DMOESIM_GPU_BACKEND=CUDA (or HIP), or pass --kernels-dir");
  }
  for (const calibrate::BenchStep& step : steps) {
    if (!fs::exists(programs / step.program)) {
      throw ConfigError(
          (programs / step.program).string(), "",
          "suite '" + step.suite +
              "' needs this program, which this build lacks (cuBLASLt/hipBLASLt or NCCL/RCCL not "
              "found at configure time: see the CMake messages)");
    }
  }
  return programs;
}

// Result documents of the suites that ran and the failures of those that did not; a failed suite does not
// stop the others.
struct SuiteResults {
  nlohmann::ordered_json documents = nlohmann::ordered_json::array();
  nlohmann::ordered_json failures = nlohmann::ordered_json::array();

  void run(const std::string& name, const std::string& command, const fs::path& json) {
    std::cout << "# moesim bench: " << command << std::endl;
    const int status = std::system(command.c_str());
    if (status != 0 || !fs::exists(json)) {
      failures.push_back({{"suite", name}, {"command", command}, {"status", status}});
      std::cout << "# moesim bench: " << name << " failed (status " << status << ")" << std::endl;
      return;
    }
    std::ifstream in(json);
    std::stringstream text;
    text << in.rdbuf();
    try {
      documents.push_back(nlohmann::ordered_json::parse(text.str()));
    } catch (const nlohmann::json::exception&) {
      // A benchmark killed mid-write: its suite failed, not moesim.
      failures.push_back(
          {{"suite", name}, {"command", command}, {"status", status}, {"error", "invalid JSON"}});
      std::cout << "# moesim bench: " << name << " failed (" << json.string() << " is not valid JSON)"
                << std::endl;
    }
  }
};

// PyTorch SDPA on the attention suite's shapes: what calibrate takes attention from (our kernel is unfused).
void run_torch_sdpa(SuiteResults& results, const fs::path& parts) {
  const fs::path torch_json = parts / "torch_sdpa.json";
  const std::string script = std::string(MOESIM_SOURCE_DIR) + "/kernels/tools/torch_sdpa_compare.py";
  if (std::system("python3 -c 'import torch' > /dev/null 2>&1") == 0) {
    results.run("torch_sdpa", "python3 " + quote(script) + " --json " + quote(torch_json.string()),
                torch_json);
  } else {
    std::cout << "# moesim bench: PyTorch not importable: torch_sdpa skipped (attention will come from the "
                 "unfused kernel)"
              << std::endl;
  }
}

int run_bench(const BenchOptions& o, const Invocation& invocation) {
  const std::string table = std::string(MOESIM_SOURCE_DIR) + "/kernels/tools/bench_suites.tsv";
  const std::vector<calibrate::BenchStep> steps =
      calibrate::steps_of(calibrate::load_bench_suites(table), split_list(o.suites));
  const fs::path programs = checked_programs(o, steps);
  const fs::path parts = o.out + ".d";
  fs::create_directories(parts);
  nlohmann::ordered_json merged;
  merged["schema_version"] = 1;
  merged["tool"] = "moesim bench";
  merged["tool_version"] = MOESIM_VERSION;
  merged["git_sha"] = MOESIM_GIT_SHA;
  merged["args"] = invocation.args;
  merged["kernels_dir"] = programs.string();
  merged["start_time"] = utc_now();
  SuiteResults results;
  for (const calibrate::BenchStep& step : steps) {
    const fs::path json = parts / (step.step + ".json");
    std::string command = quote((programs / step.program).string()) + " " + step.args;
    if (step.program == "layer_runner") command += " --model " + quote(layer_model_file(o.layer_model));
    if (step.all_gpus) command += " -g " + std::to_string(o.gpus);
    results.run(step.step, command + " -J " + quote(json.string()), json);
    if (step.step == "attention" && o.torch) run_torch_sdpa(results, parts);
  }
  merged["end_time"] = utc_now();
  merged["failures"] = results.failures;
  merged["suites"] = results.documents;
  std::cout << "# wrote " << write_new_file(o.out, merged.dump(1) + "\n") << " (" << results.documents.size()
            << " result documents; raw files in " << parts.string() << ")" << std::endl;
  return results.failures.empty() ? 0 : 1;
}
}  // namespace

void add_bench(CLI::App& app, const Invocation& invocation, Action& action) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Run this build's kernels/ GPU microbenchmarks and merge their JSON into one results file for "
      "`moesim calibrate --from` (needs a build with -DMOESIM_GPU_BACKEND=CUDA or HIP)");
  sub->add_option(
         "--suite", o->suites,
         "Comma-separated suites of kernels/tools/bench_suites.tsv: gemm, grouped_gemm, attention (+ PyTorch "
         "SDPA when importable), memory, collectives, contention, launch, power (board power and clock: the "
         "profile's power section), persistent, layer")
      ->capture_default_str();
  sub->add_option("--out", o->out,
                  "Merged results file (never overwritten: FILE.1, ... instead); raw files go to "
                  "FILE.d/")
      ->required();
  sub->add_option("--gpus", o->gpus, "GPUs for collectives and contention (-g of the benchmarks)")
      ->check(CLI::Range(2, 64))
      ->capture_default_str();
  sub->add_option("--kernels-dir", o->kernels_dir, "Folder with the built *_bench programs")
      ->capture_default_str();
  sub->add_flag("!--no-torch", o->torch, "Skip the PyTorch SDPA comparison in the attention suite");
  sub->add_option(
         "--layer-model", o->layer_model,
         "Model of the layer suite (a shipped name or a JSON file): layer_runner runs 4 layers, 2048 "
         "tokens per GPU on --gpus GPUs; compare with `moesim validate --measured FILE.d/layer.json`")
      ->capture_default_str();
  sub->callback(
      [o, &action, &invocation] { action = [o, &invocation] { return run_bench(*o, invocation); }; });
}

}  // namespace moesim::app
