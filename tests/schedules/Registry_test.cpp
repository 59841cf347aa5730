// The schedule registry: a schedule is one registration; everything else (lookup, --opt checking, figures)
// follows from it. The example schedule below is what a new schedule family file holds.
#include "moesim/schedules/Registry.hpp"

#include <gtest/gtest.h>

#include <set>

#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/schedules/Simulation.hpp"

using namespace moesim;
using namespace moesim::schedules;

namespace {

constexpr double kKernelNs = 250'000;  // each layer's one kernel, alone: fixed time, no resource to share

/**
 * An example family: one opaque kernel per layer on one stream, launched by the host. Its step on one
 * rank is host launch + layers x kernel, and it reports how many kernels it placed.
 */
void register_one_kernel_per_layer(ScheduleRegistry& registry) {
  Schedule s;
  s.name = "example-one-kernel-per-layer";
  s.help = "Test family: one fixed-time kernel per layer";
  s.options = {{"launch_us", "N", "host launch cost per kernel (default 0)"}};
  s.build = [](const Scenario& scenario) {
    BuiltProgram out;
    out.program = std::make_shared<sim::Program>(group_size(scenario), true);
    out.program->set_streams(0, {"compute"});
    auto it = scenario.options.find("launch_us");
    const double launch_ns = it == scenario.options.end() ? 0.0 : std::stod(it->second) * 1e3;
    out.layers = simulated_layers(scenario);
    sim::KernelWork work;
    work.fixed_ns = kKernelNs;
    for (int l = 0; l < out.layers; ++l)
      out.program->add_kernel(0, 0, "L" + std::to_string(l) + ".kernel", "compute", work, launch_ns, {},
                              {l, false, "kernel"});
    out.tokens_per_step = static_cast<double>(scenario.workload.tokens) * group_size(scenario);
    FigureGroup g;
    g.key = "example";
    g.values = {{"kernels", std::int64_t{out.layers}}};
    out.figures.push_back(g);
    return out;
  };
  registry.add(std::move(s));
}

Scenario scenario(const std::string& schedule) {
  Scenario s;
  s.model = models::load_model("deepseek-v2-lite");
  s.hw = hw::load_profile("h100");
  s.schedule = schedule;
  s.parallel.ep = 8;
  s.workload.phase = Phase::FORWARD;
  s.workload.tokens = 4096;
  s.workload.seq_len = 4096;
  s.workload.layers = 4;
  s.power_cap = false;
  return s;
}

}  // namespace

TEST(Registry, ANewScheduleIsOneRegistration) {
  if (schedule_registry().find("example-one-kernel-per-layer") == nullptr)
    register_one_kernel_per_layer(schedule_registry());
  // Hand calculation: launches overlap the previous kernel, so step = first launch + 4 x 250 us.
  Scenario s = scenario("example-one-kernel-per-layer");
  s.options["launch_us"] = "10";
  SimulationResult r = simulate(s);
  EXPECT_DOUBLE_EQ(r.step_ms, 0.010 + 4 * 0.250);
  EXPECT_DOUBLE_EQ(r.layer_ms, r.step_ms / 4);
  ASSERT_NE(r.figure_group("example"), nullptr);
  EXPECT_EQ(r.figure_group("example")->number("kernels"), 4.0);
  // Its options are the ones it declared.
  s.options = {{"chunks", "2"}};
  try {
    simulate(s);
    FAIL() << "an undeclared option must be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("known: launch_us"), std::string::npos) << e.what();
  }
  // A name is registered once.
  EXPECT_THROW(register_one_kernel_per_layer(schedule_registry()), InternalError);
}

TEST(Registry, EveryBuiltInScheduleIsDescribed) {
  std::set<std::string> names;
  for (const Schedule& s : schedule_registry().all()) {
    EXPECT_FALSE(s.help.empty()) << s.name;
    EXPECT_TRUE(static_cast<bool>(s.build)) << s.name;
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    for (const auto& o : s.options) EXPECT_FALSE(o.description.empty()) << s.name << " " << o.key;
  }
  // The four families of SPEC.md: regular EP, FarSkip, FoldMoE's pipelines and FlashMoE's megakernel.
  for (const char* name : {"regular", "farskip", "megatron", "1a1m-uniform", "megakernel", "megatron-te"})
    EXPECT_TRUE(names.count(name)) << name;
  EXPECT_THROW(find_schedule("no-such-schedule"), ConfigError);
}
