// `moesim list models|hw|schedules|impls`.
#include <fmt/format.h>

#include <iostream>

#include "Commands.hpp"
#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/schedules/Registry.hpp"

namespace moesim::app {

namespace {
int list(const std::string& what) {
  if (what == "models") {
    std::cout << fmt::format("# {:<20} {:>6} {:>7} {:>5} {:>8} {:>7} {:>6}\n", "model", "layers", "hidden",
                             "attn", "experts", "top_k", "shared");
    for (const auto& name : models::shipped_model_names()) {
      auto m = models::load_model(name);
      std::cout << fmt::format("  {:<20} {:>6} {:>7} {:>5} {:>8} {:>7} {:>6}\n", name, m.layers, m.hidden,
                               models::to_string(m.attention.type), m.moe.experts, m.moe.top_k,
                               m.moe.shared_experts);
    }
  } else if (what == "hw") {
    std::cout << fmt::format("# {:<10} {:<11} {:<28} {:>5} {:>9} {:>9} {:>8}\n", "name", "provenance", "gpu",
                             "SMs", "bf16", "HBM", "fabric");
    std::cout << fmt::format("# {:<10} {:<11} {:<28} {:>5} {:>9} {:>9} {:>8}\n", "", "", "", "", "(TFLOP/s)",
                             "(GB/s)", "(GB/s)");
    for (const auto& name : hw::shipped_profile_names()) {
      auto p = hw::load_profile(name);
      std::cout << fmt::format("  {:<10} {:<11} {:<28} {:>5} {:>9.0f} {:>9.0f} {:>8.0f}\n", name,
                               hw::to_string(p.provenance.kind), p.gpu.name, p.gpu.sm_count,
                               p.peak_flops("bf16") / 1e12, p.gpu.hbm_bw_Bps / 1e9,
                               p.node.fabric.per_gpu_bw_Bps / 1e9);
    }
  } else if (what == "impls") {
    std::cout << "# implementation profiles (--impl NAME, or a FILE learned by calibrate --torch-trace)\n";
    for (const auto& name : cost::shipped_implementation_names()) {
      const cost::ImplementationProfile p = cost::load_implementation(name);
      const std::string& text = p.provenance.description;
      std::cout << name << ": "
                << (p.is_fused() ? "the in-tree layer runner's kernels, launched from C++"
                                 : text.substr(0, text.find(';')))
                << "\n";
    }
  } else {
    for (const auto& s : schedules::schedule_registry().all()) {
      std::cout << s.name << ": " << s.help << "\n";
      for (const auto& o : s.options)
        std::cout << fmt::format("    --opt {}={}  {}\n", o.key, o.values, o.description);
    }
    std::cout << "# pipeline schedules (--pp-schedule)\n";
    for (const auto& p : schedules::schedule_registry().pipelines())
      std::cout << p.name << ": " << p.help << "\n";
  }
  return 0;
}
}  // namespace

void add_list(CLI::App& app, Action& action) {
  auto what = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "list", "List shipped models, hardware profiles, schedules or implementation profiles");
  sub->add_option("what", *what, "models | hw | schedules | impls")
      ->required()
      ->check(CLI::IsMember({"models", "hw", "schedules", "impls"}));
  sub->callback([what, &action] { action = [what] { return list(*what); }; });
}

}  // namespace moesim::app
