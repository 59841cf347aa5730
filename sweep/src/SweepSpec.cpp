#include "moesim/sweep/SweepSpec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>

#include "moesim/common/Error.hpp"
#include "moesim/common/InputFile.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/common/NumberText.hpp"

namespace moesim::sweep {

namespace {

// Limits (docs/limits.md). Range bounds stay where doubles hold every integer exactly (2^53 ~ 9e15).
constexpr std::size_t kMaxAxisValues = 100000;
constexpr std::size_t kMaxPoints = 100000;
constexpr double kMaxRangeBound = 1e15;

std::string value_text(const nlohmann::json& v, const std::string& file, const std::string& pointer) {
  if (v.is_string()) {
    const std::string text = v.get<std::string>();
    // A control character would tear the results file's lines (and ids are matched line by line on resume).
    for (char c : text) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        throw ConfigError(file, pointer, "= " + shown_value(v) + ": must not hold control characters");
    }
    return text;
  }
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      throw ConfigError(file, pointer, "= " + shown_value(v) + ": must be < 2^63");
    return std::to_string(v.get<std::int64_t>());
  }
  if (v.is_number()) return v.dump();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  throw ConfigError(file, pointer, "expected a string, a number or true/false");
}

/** How many values a range holds, before any is made: so that a huge one is refused at once. */
double range_count(double from, double to, std::optional<double> step, std::optional<double> mul) {
  if (step) return std::floor((to - from) / *step * (1 + 1e-12)) + 1;
  return std::floor(std::log(to / from) / std::log(*mul) * (1 + 1e-12)) + 1;
}

/** A range object {"from", "to", and "step" (additive) or "mul" (geometric)}; inclusive of "to". */
std::vector<std::string> expand_range(const nlohmann::json& v, const std::string& file,
                                      const std::string& pointer) {
  JsonObject o(v, file, pointer);
  double from = o.number("from"), to = o.number("to");
  auto step = o.optional_number("step");
  auto mul = o.optional_number("mul");
  if (std::abs(from) > kMaxRangeBound) o.fail("from", "must be within +-1e15");
  if (std::abs(to) > kMaxRangeBound) o.fail("to", "must be within +-1e15");
  o.finish();
  if (step.has_value() == mul.has_value())
    throw ConfigError(file, pointer, "needs exactly one of \"step\" or \"mul\"");
  if ((step && !(*step > 0)) || (mul && !(*mul > 1)) || to < from) {
    throw ConfigError(file, pointer, "must run upwards: from <= to, step > 0 or mul > 1");
  }
  if (mul && !(from > 0)) throw ConfigError(file, pointer + "/from", "must be > 0 for a range with \"mul\"");
  const double count = range_count(from, to, step, mul);
  if (!(count <= static_cast<double>(kMaxAxisValues))) {
    throw ConfigError(file, pointer,
                      "holds " + format_number(count) + " values, more than the " +
                          std::to_string(kMaxAxisValues) + " an axis may have (docs/limits.md)");
  }
  std::vector<std::string> out;
  for (double x = from; x <= to * (1 + 1e-12) && out.size() < kMaxAxisValues;
       x = step ? x + *step : x * *mul) {
    double r = std::round(x);
    out.push_back(std::abs(x - r) < 1e-9 ? std::to_string(static_cast<std::int64_t>(r))
                                         : nlohmann::json(x).dump());
  }
  return out;
}

double term_value(const std::string& term, const std::map<std::string, std::string>& params,
                  const std::string& file, const std::string& condition) {
  std::istringstream in(term);
  std::string first, star, second;
  in >> first >> star >> second;
  auto atom = [&](const std::string& a) {
    if (auto it = params.find(a); it != params.end()) {
      try {
        return std::stod(it->second);
      } catch (const std::exception&) {
        throw ConfigError(file, "/filter",
                          "\"" + condition + "\": " + a + " = " + it->second + " is not a number");
      }
    }
    try {
      std::size_t used = 0;
      double d = std::stod(a, &used);
      if (used == a.size()) return d;
    } catch (const std::exception&) {
    }
    throw ConfigError(file, "/filter",
                      "\"" + condition + "\": " + a + " is neither a number nor a swept or base flag");
  };
  double v = atom(first);
  if (!star.empty()) {
    if (star != "*" || second.empty())
      throw ConfigError(file, "/filter", "\"" + condition + "\": terms are NAME or NAME * NUMBER");
    v *= atom(second);
  }
  return v;
}

/** Keys of base and axes are `moesim simulate` flags without their dashes: lower-case words and dashes. */
void check_flag_name(const std::string& name, const std::string& file, const std::string& pointer) {
  const bool ok = !name.empty() && name.size() <= 64 && name.front() != '-' &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
                  });
  if (!ok)
    throw ConfigError(file, pointer, "is not a flag name (moesim simulate's flags without their dashes)");
}

void check_distinct(const std::vector<std::string>& values, const std::string& file,
                    const std::string& pointer) {
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto [at, added] = seen.emplace(values[i], i);
    if (!added) {
      throw ConfigError(file, pointer + "/" + std::to_string(i),
                        "= \"" + values[i] + "\": repeats value " + std::to_string(at->second) +
                            " of the axis (each value once, or results would collide)");
    }
  }
}

/** Points before filtering: the product of the axis lengths, a zip group counting once. */
void check_point_count(const SweepSpec& spec) {
  double points = 1;
  std::set<std::string> counted;
  for (const auto& name : spec.axis_names) {
    if (counted.count(name)) continue;
    for (const auto& group : spec.zip_groups) {
      if (std::find(group.begin(), group.end(), name) != group.end())
        counted.insert(group.begin(), group.end());
    }
    points *= static_cast<double>(spec.axes.at(name).size());
  }
  if (points > static_cast<double>(kMaxPoints)) {
    throw ConfigError(spec.file, "/axes",
                      "expand to " + format_number(points) + " points, more than the " +
                          std::to_string(kMaxPoints) +
                          " a sweep may have (docs/limits.md; split it, or zip axes)");
  }
}

}  // namespace

bool passes(const std::string& condition, const std::map<std::string, std::string>& params,
            const std::string& file) {
  for (const char* op : {"<=", ">=", "==", "!=", "<", ">"}) {
    auto at = condition.find(op);
    if (at == std::string::npos) continue;
    double a = term_value(condition.substr(0, at), params, file, condition);
    double b = term_value(condition.substr(at + std::string(op).size()), params, file, condition);
    std::string o = op;
    if (o == "<=") return a <= b;
    if (o == ">=") return a >= b;
    if (o == "==") return a == b;
    if (o == "!=") return a != b;
    if (o == "<") return a < b;
    return a > b;
  }
  throw ConfigError(file, "/filter", "\"" + condition + "\": expected A OP B with OP one of < <= > >= == !=");
}

SweepSpec parse_sweep(const std::string& text, const std::string& file) {
  auto doc = parse_json_text(text, file);
  JsonObject root(doc, file);
  SweepSpec spec;
  spec.file = file;
  if (root.integer("schema_version") != 1) root.fail("schema_version", "must be 1");
  if (auto base = root.optional_object("base")) {
    for (auto it = doc["base"].begin(); it != doc["base"].end(); ++it) {
      check_flag_name(it.key(), file, "/base/" + it.key());
      spec.base[it.key()] = value_text(it.value(), file, "/base/" + it.key());
    }
  }
  const auto& axes = root.raw("axes");
  if (!axes.is_object() || axes.empty())
    throw ConfigError(file, "/axes", "must be an object with at least one axis");
  for (auto it = axes.begin(); it != axes.end(); ++it) {
    const std::string pointer = "/axes/" + it.key();
    check_flag_name(it.key(), file, pointer);
    std::vector<std::string> values;
    if (it.value().is_array()) {
      for (std::size_t i = 0; i < it.value().size(); ++i) {
        values.push_back(value_text(it.value()[i], file, pointer + "/" + std::to_string(i)));
      }
    } else if (it.value().is_object()) {
      values = expand_range(it.value(), file, pointer);
    } else {
      throw ConfigError(file, pointer, "expected a list of values or a {from, to, step|mul} range");
    }
    if (values.empty()) throw ConfigError(file, pointer, "has no values");
    if (values.size() > kMaxAxisValues)
      throw ConfigError(file, pointer,
                        "has more than the " + std::to_string(kMaxAxisValues) + " values an axis may have");
    check_distinct(values, file, pointer);
    spec.axis_names.push_back(it.key());
    spec.axes[it.key()] = values;
  }
  if (root.has("zip")) {
    const auto& zip = root.raw("zip");
    std::set<std::string> seen;
    for (std::size_t g = 0; zip.is_array() && g < zip.size(); ++g) {
      std::vector<std::string> group;
      for (std::size_t i = 0; zip[g].is_array() && i < zip[g].size(); ++i) {
        std::string pointer = "/zip/" + std::to_string(g) + "/" + std::to_string(i);
        if (!zip[g][i].is_string() || !spec.axes.count(zip[g][i].get<std::string>())) {
          throw ConfigError(file, pointer, "must name an axis");
        }
        std::string name = zip[g][i].get<std::string>();
        if (!seen.insert(name).second) throw ConfigError(file, pointer, "axis is in two zip groups");
        if (spec.axes[name].size() != spec.axes[group.empty() ? name : group.front()].size()) {
          throw ConfigError(file, pointer, "zipped axes must have the same number of values");
        }
        group.push_back(name);
      }
      if (group.size() < 2)
        throw ConfigError(file, "/zip/" + std::to_string(g), "a zip group needs two or more axes");
      spec.zip_groups.push_back(group);
    }
    if (!zip.is_array()) throw ConfigError(file, "/zip", "expected a list of lists of axis names");
  }
  if (root.has("filter")) {
    const auto& f = root.raw("filter");
    for (std::size_t i = 0; f.is_array() && i < f.size(); ++i) {
      if (!f[i].is_string())
        throw ConfigError(file, "/filter/" + std::to_string(i), "expected a condition string");
      spec.filters.push_back(f[i].get<std::string>());
    }
    if (!f.is_array()) throw ConfigError(file, "/filter", "expected a list of conditions");
  }
  if (auto metric = root.optional_string("metric")) spec.metric = *metric;
  root.finish();
  check_point_count(spec);
  return spec;
}

SweepSpec load_sweep(const std::string& path) {
  return parse_sweep(read_input_file(path, InputKind::SPEC), path);
}

std::vector<Point> expand(const SweepSpec& spec) {
  // Dimensions: each zip group is one dimension, every other axis its own.
  std::vector<std::vector<std::string>> dims;
  std::set<std::string> zipped;
  for (const auto& name : spec.axis_names) {
    if (zipped.count(name)) continue;
    const std::vector<std::string>* group = nullptr;
    for (const auto& g : spec.zip_groups) {
      if (std::find(g.begin(), g.end(), name) != g.end()) group = &g;
    }
    if (group) {
      dims.push_back(*group);
      zipped.insert(group->begin(), group->end());
    } else {
      dims.push_back({name});
    }
  }
  std::vector<Point> points;
  std::set<std::string> ids;
  std::vector<std::size_t> index(dims.size(), 0);
  while (true) {
    Point p;
    p.params = spec.base;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      for (const auto& name : dims[d]) p.axis_values[name] = spec.axes.at(name)[index[d]];
    }
    for (const auto& name : spec.axis_names) {
      p.params[name] = p.axis_values[name];
      p.id += (p.id.empty() ? "" : ",") + name + "=" + p.axis_values[name];
    }
    bool keep = true;
    for (const auto& f : spec.filters) keep = keep && passes(f, p.params, spec.file);
    if (keep && !ids.insert(p.id).second) {
      throw ConfigError(spec.file, "/axes",
                        "give two points the same id \"" + p.id +
                            "\" (a value holds \",\" or \"=\"): results would collide");
    }
    if (keep) points.push_back(std::move(p));
    std::size_t d = dims.size();
    while (d > 0) {
      --d;
      if (++index[d] < spec.axes.at(dims[d].front()).size()) break;
      index[d] = 0;
      if (d == 0) return points;
    }
    if (dims.empty()) return points;
  }
}

}  // namespace moesim::sweep
