#include "moesim/validate/Published.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "moesim/common/DataRoot.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/schedules/FlashMoe.hpp"
#include "moesim/schedules/ScenarioFlags.hpp"
#include "moesim/schedules/Simulation.hpp"

namespace moesim::validate {

namespace {

using schedules::SimulationResult;
using Flags = std::map<std::string, std::string>;

/** Overlap of the forward or the backward half of a training step on rank 0 (Table 3's fwd/bwd columns). */
double pass_overlap_pct(const SimulationResult& r, bool backward) {
  std::vector<std::pair<sim::TimeNs, sim::TimeNs>> compute, comm;
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].rank != 0 || ops[i].kind == sim::OpKind::HOST || ops[i].origin.backward != backward) continue;
    (ops[i].is_comm() ? comm : compute).emplace_back(r.run.ops[i].start, r.run.ops[i].end);
  }
  sim::TimeNs total = 0, exposed = 0;
  for (auto [b, e] : comm) {
    total += e - b;
    // Walk the comm interval and subtract compute coverage (compute kernels on one stream do not overlap).
    sim::TimeNs covered = 0;
    for (auto [cb, ce] : compute) covered += std::max<sim::TimeNs>(0, std::min(e, ce) - std::max(b, cb));
    exposed += std::max<sim::TimeNs>(0, (e - b) - covered);
  }
  return total > 0 ? 100.0 * (1.0 - static_cast<double>(exposed) / static_cast<double>(total)) : 0.0;
}

/**
 * Mean time of one forward `block` ("dispatch", "combine") on rank 0 per layer that has one, in us: from
 * its first op's start to its last op's end (a hierarchical all-to-all has two legs and a join).
 */
double comm_block_us(const SimulationResult& r, const std::string& block) {
  std::map<int, std::pair<sim::TimeNs, sim::TimeNs>> span;  // layer -> [start, end]
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].rank != 0 || ops[i].origin.backward || ops[i].origin.block != block) continue;
    auto [it, fresh] = span.try_emplace(ops[i].origin.layer, r.run.ops[i].start, r.run.ops[i].end);
    if (!fresh) {
      it->second.first = std::min(it->second.first, r.run.ops[i].start);
      it->second.second = std::max(it->second.second, r.run.ops[i].end);
    }
  }
  if (span.empty()) return 0;
  double total = 0;
  for (const auto& [layer, s] : span) total += static_cast<double>(s.second - s.first);
  return total / static_cast<double>(span.size()) / 1e3;
}

/** The metrics a row may ask of one simulation, kept instead of the whole result. */
struct SimulatedValues {
  std::map<std::string, double> metric;
};

SimulatedValues values_of(const SimulationResult& r) {
  SimulatedValues v;
  v.metric = {{"step_ms", r.step_ms},
              {"layer_ms", r.layer_ms},
              {"overlap_pct", r.overlap_pct},
              {"tokens_per_s", r.tokens_per_s},
              {"sm_util_pct", r.sm_util_pct},
              {"mfu_pct", r.mfu_pct},
              {"forward_overlap_pct", pass_overlap_pct(r, false)},
              {"backward_overlap_pct", pass_overlap_pct(r, true)},
              {"dispatch_us", comm_block_us(r, "dispatch")},
              {"combine_us", comm_block_us(r, "combine")}};
  for (const schedules::FigureGroup& group : r.figures) {
    for (const schedules::Figure& f : group.values) {
      if (auto number = group.number(f.name)) v.metric[group.key + "." + f.name] = *number;
    }
  }
  return v;
}

/** JSON flag values (text or numbers) as the text ScenarioFlags::set takes. */
Flags flags_of(const nlohmann::json& object, const std::string& file, const std::string& pointer) {
  if (!object.is_object()) throw ConfigError(file, pointer, "must be an object of simulate flags");
  Flags out;
  for (const auto& [key, value] : object.items()) {
    if (value.is_string()) {
      out[key] = value.get<std::string>();
    } else if (value.is_number_integer()) {
      out[key] = std::to_string(value.get<std::int64_t>());
    } else if (value.is_number()) {
      out[key] = nlohmann::json(value.get<double>()).dump();
    } else {
      throw ConfigError(file, pointer + "/" + key, "must be a string or a number");
    }
  }
  return out;
}

Flags overlay(Flags base, const Flags& more) {
  for (const auto& [k, v] : more) base[k] = v;
  return base;
}

double symmetric_tensor_gib(const nlohmann::json& args, const std::string& file, const std::string& pointer) {
  JsonObject a(args, file, pointer);
  const double bytes = schedules::symmetric_tensor_bytes(
      a.positive_integer("tokens"), static_cast<int>(a.positive_integer("experts")),
      a.positive_integer("hidden"), static_cast<int>(a.positive_integer("element_bytes")),
      static_cast<int>(a.positive_integer("tile_m")));
  a.finish();
  return bytes / (1024.0 * 1024 * 1024);
}

/** A number as the arithmetic of a bound prints it. */
std::string number_text(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.6g}", v);
}

/** Evaluates the expressions of one file, simulating each distinct flag set once. */
class Evaluator {
 public:
  explicit Evaluator(std::string file) : file_(std::move(file)) {}

  double eval(const nlohmann::json& e, const Flags& flags, const std::string& at) {
    if (e.is_number()) return e.get<double>();
    if (e.is_object() && e.contains("value")) return simulated(e, flags, at);
    if (e.is_object() && e.contains("formula")) return formula(e, at);
    if (!e.is_object() || e.size() != 1)
      throw ConfigError(file_, at, "expected a number or one of " + std::string(kOperators));
    // begin() kept as a named iterator: a binding to *items().begin() outlives the proxy it refers to.
    const auto first = e.begin();
    const std::string op = first.key();
    const nlohmann::json& arg = first.value();
    const std::string here = at + "/" + op;
    if (op == "ratio" || op == "gain_pct") {
      if (!arg.is_array() || arg.size() != 2) throw ConfigError(file_, here, "expected [a, b]");
      const double a = eval(arg[0], flags, here + "/0"), b = eval(arg[1], flags, here + "/1");
      if (b == 0) throw ConfigError(file_, here, "divides by zero");
      return op == "ratio" ? a / b : 100.0 * (a / b - 1.0);
    }
    if (op == "sum" || op == "product") {
      double out = op == "sum" ? 0.0 : 1.0;
      for (double v : list(arg, flags, here)) out = op == "sum" ? out + v : out * v;
      return out;
    }
    if (op == "min" || op == "max") return extreme(op == "min", arg, flags, here);
    throw ConfigError(file_, here, "unknown expression (known: " + std::string(kOperators) + ")");
  }

  /**
   * The arithmetic of an expression made of numbers and formulas only, as text ("(a + b) / c"); a
   * simulated value inside is an error: a bound comes from the source's numbers alone.
   */
  std::string render(const nlohmann::json& e, const std::string& at) {
    if (e.is_number()) return number_text(e.get<double>());
    if (e.is_object() && e.contains("value"))
      throw ConfigError(file_, at, "a bound is computed from the source's own numbers: no simulated value");
    if (e.is_object() && e.contains("formula"))
      return e.at("formula").get<std::string>() + "(...) = " + number_text(formula(e, at));
    if (!e.is_object() || e.size() != 1) eval(e, {}, at);  // throws: not an expression
    // begin() kept as a named iterator: a binding to *items().begin() outlives the proxy it refers to.
    const auto first = e.begin();
    const std::string op = first.key();
    const nlohmann::json& arg = first.value();
    const std::string here = at + "/" + op;
    if ((op == "min" || op == "max") && arg.is_object())
      throw ConfigError(file_, here, "a bound takes min/max over listed numbers, not over flag sets");
    const bool two = op == "ratio" || op == "gain_pct";
    if (!two && op != "sum" && op != "product" && op != "min" && op != "max")
      throw ConfigError(file_, here, "unknown expression (known: " + std::string(kOperators) + ")");
    if (two && (!arg.is_array() || arg.size() != 2)) throw ConfigError(file_, here, "expected [a, b]");
    if (!arg.is_array() || arg.empty()) throw ConfigError(file_, here, "expected a non-empty array");
    auto part = [&](std::size_t i) {
      const nlohmann::json& sub = arg[i];
      const std::string text = render(sub, here + "/" + std::to_string(i));
      const bool compound = sub.is_object() && !sub.contains("formula") &&
                            (sub.begin().key() != "min" && sub.begin().key() != "max");
      return compound ? "(" + text + ")" : text;
    };
    auto joined = [&](const std::string& separator) {
      std::string out;
      for (std::size_t i = 0; i < arg.size(); ++i) out += (i ? separator : "") + part(i);
      return out;
    };
    if (op == "ratio") return part(0) + " / " + part(1);
    if (op == "gain_pct") return "100 * (" + part(0) + " / " + part(1) + " - 1)";
    if (op == "sum") return joined(" + ");
    if (op == "product") return joined(" * ");
    return op + "(" + joined(", ") + ")";
  }

 private:
  static constexpr const char* kOperators = "value, ratio, gain_pct, sum, product, min, max, formula";

  std::vector<double> list(const nlohmann::json& arg, const Flags& flags, const std::string& at) {
    if (!arg.is_array() || arg.empty()) throw ConfigError(file_, at, "expected a non-empty array");
    std::vector<double> values;
    for (std::size_t i = 0; i < arg.size(); ++i)
      values.push_back(eval(arg[i], flags, at + "/" + std::to_string(i)));
    return values;
  }

  double simulated(const nlohmann::json& e, const Flags& flags, const std::string& at) {
    JsonObject o(e, file_, at);
    const std::string metric = o.string("value");
    const Flags all = o.has("flags") ? overlay(flags, flags_of(o.raw("flags"), file_, at + "/flags")) : flags;
    o.finish();
    const SimulatedValues& values = simulate(all, at);
    auto it = values.metric.find(metric);
    if (it == values.metric.end()) o.fail("value", "= \"" + metric + "\": not a metric a row can ask for");
    return it->second;
  }

  /** A model flag ending in .json names a spec beside the data file. */
  std::string model_path(const std::string& model) const {
    if (!model.ends_with(".json")) return model;
    return (std::filesystem::path(file_).parent_path() / model).string();
  }

  const SimulatedValues& simulate(const Flags& flags, const std::string& at) {
    std::string key;
    for (const auto& [k, v] : flags) key += k + "=" + v + "\n";
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    schedules::ScenarioFlags scenario;
    try {
      for (const auto& [k, v] : flags) scenario.set(k, k == "model" ? model_path(v) : v);
    } catch (const ConfigError& e) {
      throw ConfigError(file_, at, std::string("flags: ") + e.what());
    }
    return cache_.emplace(key, values_of(schedules::simulate(schedules::make_scenario(scenario))))
        .first->second;
  }

  double formula(const nlohmann::json& e, const std::string& at) {
    JsonObject o(e, file_, at);
    const std::string name = o.string("formula");
    const nlohmann::json& args = o.raw("args");
    o.finish();
    if (name == "flashmoe_symmetric_tensor_gib") return symmetric_tensor_gib(args, file_, at + "/args");
    o.fail("formula", "= \"" + name + "\": unknown (known: flashmoe_symmetric_tensor_gib)");
  }

  double extreme(bool smallest, const nlohmann::json& arg, const Flags& flags, const std::string& at) {
    std::vector<double> values;
    if (arg.is_array()) {
      values = list(arg, flags, at);
    } else {
      JsonObject o(arg, file_, at);
      const nlohmann::json& over = o.raw("over");
      const nlohmann::json& of = o.raw("of");
      o.finish();
      if (!over.is_array()) o.fail("over", "must be an array of flag sets");
      for (std::size_t i = 0; i < over.size(); ++i) {
        const std::string each = at + "/over/" + std::to_string(i);
        values.push_back(eval(of, overlay(flags, flags_of(over[i], file_, each)), at + "/of"));
      }
    }
    if (values.empty()) throw ConfigError(file_, at, "needs at least one value");
    return smallest ? *std::min_element(values.begin(), values.end())
                    : *std::max_element(values.begin(), values.end());
  }

  std::string file_;
  std::map<std::string, SimulatedValues> cache_;
};

/** The row's bound: {"upper" | "lower": expression of the source's numbers, "why": text}. */
RowBound read_bound(JsonObject& row, Evaluator& evaluator) {
  JsonObject b = row.object("bound");
  RowBound bound;
  bound.upper = b.has("upper");
  if (bound.upper == b.has("lower"))
    b.fail(b.has("upper") ? "lower" : "upper", "give exactly one of upper or lower");
  const std::string side = bound.upper ? "upper" : "lower";
  // Rendering first refuses simulated values before eval() would run them; eval() checks the rest.
  bound.arithmetic = evaluator.render(b.raw(side), b.child_pointer(side));
  bound.value = evaluator.eval(b.raw(side), {}, b.child_pointer(side));
  bound.why = b.string("why");
  b.finish();
  return bound;
}

ValidationRow read_row(JsonObject& row, Evaluator& evaluator, const Flags& flags, double tolerance_pct) {
  ValidationRow r;
  r.metric = row.string("metric");
  row.optional_string("note");
  r.published = evaluator.eval(row.raw("published"), flags, row.child_pointer("published"));
  r.predicted = evaluator.eval(row.raw("predicted"), flags, row.child_pointer("predicted"));
  r.tolerance_pct = row.optional_number("tolerance_pct").value_or(tolerance_pct);
  if (r.tolerance_pct <= 0) row.fail("tolerance_pct", "must be > 0");
  r.holds = row.optional_string("holds").value_or("");
  if (!r.holds.empty() && r.holds != ">" && r.holds != ">=" && r.holds != "<" && r.holds != "<=")
    row.fail("holds", "= \"" + r.holds + "\": expected >, >=, < or <=");
  if (row.has("bound")) {
    if (!r.holds.empty()) row.fail("bound", "a claim row (holds) takes no bound");
    r.bound = read_bound(row, evaluator);
  }
  row.finish();
  r.status = judge_row(r);
  return r;
}

}  // namespace

const char* to_string(RowStatus status) {
  switch (status) {
    case RowStatus::REPRODUCED:
      return "reproduced";
    case RowStatus::BOUNDED:
      return "bounded";
    case RowStatus::OFF:
      break;
  }
  return "off";
}

RowStatus judge_row(const ValidationRow& r) {
  if (!r.holds.empty()) {
    const double p = r.predicted, q = r.published;
    const bool holds = r.holds == ">" ? p > q : r.holds == ">=" ? p >= q : r.holds == "<" ? p < q : p <= q;
    return holds ? RowStatus::REPRODUCED : RowStatus::OFF;
  }
  if (std::abs(r.error_pct()) <= r.tolerance_pct) return RowStatus::REPRODUCED;
  if (r.bound) {
    const RowBound& b = *r.bound;
    const bool beyond = b.upper ? r.published > b.value : r.published < b.value;
    const bool reachable = b.upper ? r.predicted <= b.value : r.predicted >= b.value;
    if (beyond && reachable) return RowStatus::BOUNDED;
  }
  return RowStatus::OFF;
}

std::vector<ValidationRow> evaluate_published_file(const std::string& path, double tolerance_pct) {
  const nlohmann::json document = read_json_file(path);
  JsonObject top(document, path);
  if (top.integer("schema_version") != 1) top.fail("schema_version", "expected 1");
  top.string("document");
  Evaluator evaluator(path);
  std::vector<ValidationRow> rows;
  for (JsonObject& group : top.object_array("groups")) {
    const std::string source = group.string("source"), scenario = group.string("scenario");
    group.optional_string("note");
    const Flags flags =
        group.has("flags") ? flags_of(group.raw("flags"), path, group.child_pointer("flags")) : Flags{};
    for (JsonObject& row : group.object_array("rows")) {
      ValidationRow r = read_row(row, evaluator, flags, tolerance_pct);
      r.source = source;
      r.scenario = scenario;
      rows.push_back(std::move(r));
    }
    group.finish();
  }
  top.finish();
  return rows;
}

std::vector<ValidationRow> published_validation(double tolerance_pct) {
  const std::filesystem::path dir = data_root() / "validate" / "published";
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw ConfigError(dir.string(), "", "holds no published-figure files");
  std::vector<ValidationRow> rows;
  for (const std::string& file : files) {
    auto more = evaluate_published_file(file, tolerance_pct);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  return rows;
}

}  // namespace moesim::validate
