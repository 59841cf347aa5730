// layer_runner: a real multi-GPU MoE transformer layer stack (L layers, forward), run under the
// schedules the simulator models (regular, FarSkip, FarSkip with copy-engine all-to-all), so that
// `moesim validate --measured` can compare simulated and measured times. The op order per layer is
// schedules/src/Layers.cpp's (see layer/Schedule.hpp); one host thread per GPU launches that GPU's
// work; the token→expert routing is fixed on the host at setup (layer/Routing.hpp).
//
// Per configuration and schedule: the stack (full), the stack with every collective replaced by a
// local copy of the received bytes (compute-only), and once per configuration and transport the
// regular schedule's collectives alone, back to back (comm-only: NCCL, and the copy engines when
// farskip-ce runs). exposed = stack − compute-only; overlap% = 100·clamp(1 − exposed/comm-only, 0,
// 1) with the comm-only time of the schedule's own transport. All these passes are timed in rounds
// (--pass-order interleaved): round i runs iteration i of every pass, so a GPU that clocks down as it
// heats up slows every schedule alike instead of the ones measured last.
#include <algorithm>
#include <iostream>
#include <stdexcept>

#include "BenchRunner.hpp"
#include "GroupedExperts.hpp"
#include "LtMatmul.hpp"
#include "StackRunner.hpp"

namespace moesim::kernels::layer {
namespace {

struct Options {
  std::string model_file, moe_comm = "alltoall", routing = "balanced",
                          schedules = "regular,farskip,farskip-ce";
  std::string sync_splits = "on", check = "on", attention = "unfused", op_profile = "off", json_path,
              pass_order = "interleaved", experts = "loop";
  std::int64_t gpus = 1, first_gpu = 0, tokens = 8192, seq = 4096, layers = 4, seed = 1, warmup = 5,
               iters = 20;
};

void declare(CliOptions& p, Options& o) {
  p.add_string("model", 0, &o.model_file, "model file (models/specs/NAME.json)");
  p.add_int("gpus", 'g', &o.gpus, "GPUs (= EP; = TP too with --moe-comm allreduce)", 1);
  p.add_int("first-gpu", 0, &o.first_gpu, "first GPU ordinal", 0);
  p.add_string("moe-comm", 0, &o.moe_comm,
               "alltoall (EP, phase forward) or allreduce (TP=EP, phase prefill)");
  p.add_int("tokens", 0, &o.tokens, "tokens per rank (allreduce: the replicated batch)", 1);
  p.add_int("seq", 0, &o.seq, "sequence length (tokens / seq causal sequences)", 1);
  p.add_int("layers", 0, &o.layers, "layers in the stack", 1);
  p.add_string("routing", 0, &o.routing, "balanced, uniform or zipf:S");
  p.add_int("seed", 0, &o.seed, "seed of routing, weights and inputs", 0);
  p.add_string("schedules", 0, &o.schedules, "comma list of regular, farskip, farskip-ce");
  p.add_string("sync-splits", 0, &o.sync_splits, "on|off: host sync on the split sizes before Dispatch");
  p.add_string("check", 0, &o.check, "on|off: identity data-path check and NaN/Inf scan");
  p.add_string("attention", 0, &o.attention, "attention implementation: unfused");
  p.add_string(
      "experts", 0, &o.experts,
      "loop (one cuBLASLt GEMM per expert, as Megatron's SequentialMLP; default) or grouped (one cuBLAS "
      "grouped-batched GEMM per projection over all local experts)");
  p.add_string("op-profile", 0, &o.op_profile,
               "on|off: also time every step of 5 iterations on rank 0 (full and compute-only passes)");
  p.add_string("pass-order", 0, &o.pass_order,
               "interleaved|blocked: round i times iteration i of every pass (default), or each pass's "
               "iterations back to back");
  p.add_int("warmup_iters", 'w', &o.warmup, "untimed iterations per pass", 0);
  p.add_int("iters", 'n', &o.iters, "timed iterations per pass", 1);
  p.add_string("output_file", 'J', &o.json_path,
               "JSON result file (never overwritten: name.N is used instead)");
}

bool on_off(const std::string& name, const std::string& value) {
  if (value == "on") return true;
  if (value == "off") return false;
  throw ArgError("--" + name + " " + value + ": expected on or off");
}

RunConfig make_config(const Options& o) {
  RunConfig c;
  if (o.model_file.empty()) throw ArgError("--model is required");
  c.model_file = o.model_file;
  c.model = load_layer_model(o.model_file);  // ModelFileError: one line, exit 2
  try {
    c.comm = parse_moe_comm(o.moe_comm);
    c.routing = parse_routing(o.routing);
    c.schedules = parse_schedules(o.schedules, c.comm);
  } catch (const std::invalid_argument& error) {
    throw ArgError(error.what());
  }
  c.gpus = static_cast<int>(o.gpus);
  c.layers = static_cast<int>(o.layers);
  c.tokens = o.tokens;
  c.seq = o.seq;
  c.seed = static_cast<std::uint64_t>(o.seed);
  c.sync_splits = on_off("sync-splits", o.sync_splits);
  c.check = on_off("check", o.check);
  c.op_profile = on_off("op-profile", o.op_profile);
  c.attention = o.attention;
  const auto& names = attention_implementations();
  if (std::find(names.begin(), names.end(), c.attention) == names.end())
    throw ArgError("--attention " + c.attention + ": expected unfused");
  if (o.pass_order != "interleaved" && o.pass_order != "blocked")
    throw ArgError("--pass-order " + o.pass_order + ": expected interleaved or blocked");
  c.pass_order = o.pass_order == "interleaved" ? PassOrder::INTERLEAVED : PassOrder::BLOCKED;
  if (o.experts != "grouped" && o.experts != "loop")
    throw ArgError("--experts " + o.experts + ": expected grouped or loop");
  c.expert_loop = o.experts == "loop";
  if (!c.expert_loop && !grouped_gemm_available())
    throw ArgError("--experts grouped: this build has no grouped GEMM (ROCm): use --experts loop");
  c.warmup = static_cast<int>(o.warmup);
  c.iters = static_cast<int>(o.iters);
  if (c.tokens % c.seq != 0)
    throw ArgError("--tokens must be a multiple of --seq (whole sequences per rank)");
  check_expert_parallel(c.model, c.gpus, c.model_file);
  (void)slice_for_tp(c.model, c.tp(), c.model_file);
  return c;
}

Json three(const SampleStats& s) {
  Json v = Json::object();
  v["p50"] = s.p50;
  v["min"] = s.min;
  v["p99"] = s.p99;
  return v;
}

struct Measured {
  ScheduleKind kind;
  SampleStats stack, compute_only;
  PassSampler::Mean full_nvml, compute_only_nvml;
  std::vector<double> rank_p50;
  std::vector<double> barrier_wait_p50;  ///< farskip-ce: per rank, host ms waited at copy-engine barriers
  CheckResult check;
  std::vector<std::pair<std::string, OpProfile>> profiles;  ///< (pass, profile) with --op-profile on
};

constexpr int kProfiledIterations = 5;

Json profile_json(const OpProfile& profile) {
  Json p = Json::object();
  p["rank"] = profile.rank;
  p["iterations"] = profile.iterations;
  Json rows = Json::array();
  for (const OpProfile::Entry& e : profile.entries) {
    Json row = Json::object();
    row["step"] = e.name;
    row["count"] = e.count;
    row["gpu_ms"] = e.gpu_ms;
    row["host_ms"] = e.host_ms;
    rows.push_back(row);
  }
  p["steps"] = rows;
  return p;
}

Json matrix_json(const std::vector<std::vector<std::int64_t>>& matrix) {
  Json rows = Json::array();
  for (const auto& row : matrix) {
    Json r = Json::array();
    for (std::int64_t v : row) r.push_back(static_cast<long long>(v));
    rows.push_back(r);
  }
  return rows;
}

Json record(const RunConfig& c, const Measured& m, const SampleStats& comm_only, const Json& matrix,
            const Measured* regular) {
  Json r = Json::object();
  r["model"] = c.model.name;
  r["model_file"] = c.model_file;
  r["moe_comm"] = c.comm == MoeComm::ALLTOALL ? "alltoall" : "allreduce";
  r["phase"] = c.phase();
  r["schedule"] = to_string(m.kind);
  r["gpus"] = c.gpus;
  r["ep"] = c.gpus;
  r["tp"] = c.tp();
  r["layers"] = c.layers;
  r["tokens_per_rank"] = static_cast<long long>(c.tokens);
  r["seq"] = static_cast<long long>(c.seq);
  r["dtype"] = "bf16";
  r["routing"] = c.routing.text;
  r["seed"] = static_cast<unsigned long long>(c.seed);
  r["sync_splits"] = c.sync_splits;
  r["attention"] = c.attention;
  r["experts"] = c.expert_loop ? "loop" : "grouped";
  r["tokens_to_expert"] = matrix;
  r["iterations"] = c.iters;
  r["warmup"] = c.warmup;
  r["pass_order"] = c.pass_order == PassOrder::INTERLEAVED ? "interleaved" : "blocked";
  r["stack_ms"] = three(m.stack);
  Json ranks = Json::array();
  for (double v : m.rank_p50) ranks.push_back(v);
  r["per_rank_p50_ms"] = ranks;
  r["compute_only_ms"] = three(m.compute_only);
  r["comm_only_ms"] = three(comm_only);
  if (m.full_nvml.samples > 0) {
    const auto pass_json = [](const PassSampler::Mean& mean) {
      Json v = Json::object();
      v["sm_clock_mhz"] = mean.sm_clock_mhz;
      v["power_w"] = mean.power_w;
      v["samples"] = static_cast<long long>(mean.samples);
      Json clocks = Json::array(), watts = Json::array();
      for (double mhz : mean.sm_clock_mhz_per_gpu) clocks.push_back(mhz);
      for (double w : mean.power_w_per_gpu) watts.push_back(w);
      v["sm_clock_mhz_per_gpu"] = clocks;
      v["power_w_per_gpu"] = watts;
      return v;
    };
    Json nvml = Json::object();
    nvml["full"] = pass_json(m.full_nvml);
    nvml["compute_only"] = pass_json(m.compute_only_nvml);
    r["nvml_mean"] = nvml;
  }
  if (!m.barrier_wait_p50.empty()) {
    // Host time each rank's thread waited at the copy-engine barriers of one iteration (median over the
    // timed iterations): the wait for the last rank's thread, which the symmetric simulation does not see.
    Json waits = Json::array();
    for (double v : m.barrier_wait_p50) waits.push_back(v);
    r["ce_barrier_wait_ms_per_rank_p50"] = waits;
  }
  r["comm_only_transport"] = m.kind == ScheduleKind::FARSKIP_CE ? "copy_engine" : "nccl";
  const double exposed = m.stack.p50 - m.compute_only.p50;
  r["exposed_comm_ms"] = exposed;
  const double overlap = comm_only.p50 > 0 ? std::clamp(1.0 - exposed / comm_only.p50, 0.0, 1.0) : 0.0;
  r["overlap_pct"] = 100.0 * overlap;
  if (m.kind != ScheduleKind::REGULAR && regular != nullptr)
    r["speedup_vs_regular"] = regular->stack.p50 / m.stack.p50;
  if (!m.profiles.empty()) {
    Json profiles = Json::object();
    for (const auto& [pass, profile] : m.profiles) profiles[pass] = profile_json(profile);
    r["op_profile"] = profiles;
  }
  Json check = Json::object();
  check["passed"] = m.check.passed;
  check["detail"] = m.check.detail;
  r["check"] = check;
  return r;
}

std::vector<TextColumn> columns() {
  return {{"schedule", "", 10}, {"stack", "ms", 9}, {"min", "ms", 9},     {"p99", "ms", 9},
          {"compute", "ms", 9}, {"comm", "ms", 9},  {"exposed", "ms", 9}, {"overlap", "%", 7},
          {"speedup", "x", 7},  {"check", "", 5}};
}

struct Measurements {
  std::vector<Measured> schedules;
  SampleStats nccl_comm_only, ce_comm_only;  ///< the collectives alone over each transport
};

/**
 * Every schedule's full and compute-only pass, and the collectives alone (comm-only) over NCCL and, when
 * farskip-ce runs, the copy engines: the base of each schedule's overlap %. All timed in one call so that
 * --pass-order interleaved gives every pass the same clock and thermal history.
 */
Measurements measure(Stack& stack, const RunConfig& c, bool runs_copy_engine, const CheckResult& nccl_check,
                     const CheckResult& ce_check) {
  std::vector<PassSpec> passes;
  for (ScheduleKind kind : c.schedules) {
    const std::vector<Step> steps = forward_steps(c.comm, kind, c.layers, c.sync_splits);
    passes.push_back({kind, PassMode::FULL, steps});
    passes.push_back({kind, PassMode::COMPUTE_ONLY, steps});
  }
  const std::size_t comm_only_first = passes.size();
  passes.push_back({ScheduleKind::REGULAR, PassMode::COMM_ONLY, comm_only_steps(c.comm, c.layers)});
  if (runs_copy_engine)
    passes.push_back({ScheduleKind::FARSKIP_CE, PassMode::COMM_ONLY, comm_only_steps(c.comm, c.layers)});
  const std::vector<PassTimes> times = stack.time_passes(passes, c.pass_order);

  Measurements result;
  result.nccl_comm_only = summarize(times[comm_only_first].stack_ms());
  if (runs_copy_engine) result.ce_comm_only = summarize(times[comm_only_first + 1].stack_ms());
  for (std::size_t s = 0; s < c.schedules.size(); ++s) {
    Measured m;
    m.kind = c.schedules[s];
    const PassTimes& full = times[2 * s];
    const std::vector<Step>& steps = passes[2 * s].steps;
    m.stack = summarize(full.stack_ms());
    for (int r = 0; r < c.gpus; ++r) m.rank_p50.push_back(summarize(full.rank_ms(r)).p50);
    if (m.kind == ScheduleKind::FARSKIP_CE) {
      for (int r = 0; r < c.gpus; ++r) {
        std::vector<double> waits;
        for (const auto& ranks : full.barrier_wait_ms) waits.push_back(ranks.at(static_cast<std::size_t>(r)));
        m.barrier_wait_p50.push_back(summarize(waits).p50);
      }
    }
    m.compute_only = summarize(times[2 * s + 1].stack_ms());
    m.full_nvml = full.nvml;
    m.compute_only_nvml = times[2 * s + 1].nvml;
    m.check = m.kind == ScheduleKind::FARSKIP_CE ? ce_check : nccl_check;
    if (c.check) {
      const CheckResult finite = stack.check_finite(m.kind, steps);
      m.check.passed = m.check.passed && finite.passed;
      m.check.detail += (m.check.detail.empty() ? "" : "; ") + finite.detail;
    }
    if (c.op_profile) {
      m.profiles.emplace_back("full",
                              stack.profile_ops(m.kind, PassMode::FULL, steps, 0, kProfiledIterations));
      m.profiles.emplace_back(
          "compute_only", stack.profile_ops(m.kind, PassMode::COMPUTE_ONLY, steps, 0, kProfiledIterations));
    }
    result.schedules.push_back(std::move(m));
  }
  return result;
}

bool run(const RunConfig& c, const std::vector<int>& devices, ResultLog& log) {
  const auto routing = route_tokens(c.routing, c.seed, c.comm == MoeComm::ALLTOALL ? c.gpus : 1, c.tokens,
                                    static_cast<int>(c.model.experts), c.top_k());
  const Json matrix = matrix_json(tokens_to_expert(routing, static_cast<int>(c.model.experts)));
  Stack stack(c, devices, routing);
  log.comment("device memory in use on GPU " + std::to_string(devices.front()) +
              " after setup: " + std::to_string(stack.memory_used_bytes() >> 20) + " MiB");
  const bool runs_copy_engine =
      std::find(c.schedules.begin(), c.schedules.end(), ScheduleKind::FARSKIP_CE) != c.schedules.end();
  CheckResult nccl_check{true, "check off"}, ce_check{true, "check off"};
  if (c.check) {
    nccl_check = stack.check_data_path(Transport::NCCL);
    if (runs_copy_engine) ce_check = stack.check_data_path(Transport::COPY_ENGINE);
    if (!c.expert_loop) {
      const CheckResult grouped = stack.check_grouped_experts();
      for (CheckResult* check : {&nccl_check, &ce_check}) {
        check->passed = check->passed && grouped.passed;
        check->detail += "; " + grouped.detail;
      }
    }
  }
  const Measurements all = measure(stack, c, runs_copy_engine, nccl_check, ce_check);
  const std::vector<Measured>& measured = all.schedules;
  const SampleStats &nccl_comm_only = all.nccl_comm_only, &ce_comm_only = all.ce_comm_only;
  const Measured* regular = nullptr;
  for (const Measured& m : measured)
    if (m.kind == ScheduleKind::REGULAR) regular = &m;
  bool pass = true;
  log.start_table(TextTable(columns()));
  for (const Measured& m : measured) {
    const SampleStats& comm_only = m.kind == ScheduleKind::FARSKIP_CE ? ce_comm_only : nccl_comm_only;
    const Json r = record(c, m, comm_only, matrix, regular);
    const bool has_speedup = r.contains("speedup_vs_regular");
    log.add_row({to_string(m.kind), format_fixed(m.stack.p50, 3), format_fixed(m.stack.min, 3),
                 format_fixed(m.stack.p99, 3), format_fixed(m.compute_only.p50, 3),
                 format_fixed(comm_only.p50, 3), format_fixed(r.at("exposed_comm_ms").get<double>(), 3),
                 format_fixed(r.at("overlap_pct").get<double>(), 1),
                 has_speedup ? format_fixed(r.at("speedup_vs_regular").get<double>(), 3) : "-",
                 m.check.passed ? "OK" : "FAIL"},
                r);
    if (!m.check.passed) log.warning(to_string(m.kind) + ": " + m.check.detail);
    for (const auto& [pass, profile] : m.profiles) {
      for (const OpProfile::Entry& e : profile.entries)
        log.comment("op profile " + to_string(m.kind) + " " + pass + ": " + e.name + " gpu " +
                    format_fixed(e.gpu_ms, 3) + " ms, host " + format_fixed(e.host_ms, 3) + " ms");
    }
    pass = pass && m.check.passed;
  }
  return pass;
}

std::vector<int> devices_for(const Options& o) {
  int available = 0;
  CUDA_CHECK(cudaGetDeviceCount(&available));
  if (o.first_gpu + o.gpus > available)
    throw ArgError("asked for " + std::to_string(o.gpus) + " GPUs from " + std::to_string(o.first_gpu) +
                   " but " + std::to_string(available) + " are visible");
  std::vector<int> devices;
  for (std::int64_t i = 0; i < o.gpus; ++i) devices.push_back(static_cast<int>(o.first_gpu + i));
  return devices;
}

int main_body(int argc, char** argv) {
  Options o;
  CliOptions parser("layer_runner",
                    "MoE transformer layer stack on G GPUs under regular and FarSkip schedules");
  declare(parser, o);
  try {
    if (!parser.parse(argc, argv)) {
      std::cout << parser.usage();
      return 0;
    }
  } catch (const ArgError& error) {
    std::cerr << "error: " << error.what() << "\n" << parser.usage();
    return 2;
  }
  RunConfig config;
  std::vector<int> devices;
  try {
    config = make_config(o);
    devices = devices_for(o);
  } catch (const ArgError& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 2;
  } catch (const ModelFileError& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 2;
  }
  ResultLog log(ToolIdentity{"layer_runner", MOESIM_KERNELS_VERSION, MOESIM_GIT_SHA}, parser.command_line(),
                parser.values_as_json(), std::cout, o.json_path);
  log_run_header(log, "layer_runner: MoE layer stack, " + config.model.name, parser.command_line(), devices,
                 {{"cuBLASLt", blaslt_version()}, {"NCCL", nccl_version_text()}});
  log.add_context("routing_source", "host (gate kernels timed, choice overridden)");
  log.add_context("attention", config.attention);
  log.add_context("experts", config.expert_loop ? "loop" : "grouped");
  log.comment(
      "routing from the host (gate kernels timed, choice overridden); times in ms, slowest rank per "
      "iteration");
  const bool pass = run(config, devices, log);
  log_end_clocks(log, devices);
  log.set_summary("pass", pass);
  log.finish();
  return pass ? 0 : 1;
}

}  // namespace
}  // namespace moesim::kernels::layer

int main(int argc, char** argv) {
  try {
    return moesim::kernels::layer::main_body(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
    std::cout << "# error: " << error.what() << "\n" << std::flush;
    return 1;
  }
}
