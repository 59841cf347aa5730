#include "moesim/sweep/ResultLog.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "moesim/common/Error.hpp"
#include "moesim/common/InputFile.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/common/OutputFile.hpp"

namespace moesim::sweep {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return out + "\"";
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

/** Shortest text that reads back to the same double (so reruns and resumes print identically). */
std::string number(double v) {
  return nlohmann::json(v).dump();
}

/** A metric cell written by number(): a finite double, the whole cell. */
bool read_number(const std::string& cell, double& value) {
  const char* end = cell.data() + cell.size();
  const auto [stop, error] = std::from_chars(cell.data(), end, value);
  return error == std::errc() && stop == end && std::isfinite(value);
}

/** Appends `text` to `path` in one write and closes it; ConfigError with the system's reason on failure. */
void append_text(const std::string& path, const std::string& text) {
  std::FILE* out = std::fopen(path.c_str(), "a");
  if (!out) throw ConfigError(path, "", std::string("cannot be appended to: ") + std::strerror(errno));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), out) == text.size() && std::fflush(out) == 0;
  const int error = errno;
  if (std::fclose(out) != 0 || !wrote)
    throw ConfigError(path, "", std::string("could not be written: ") + std::strerror(wrote ? errno : error));
}
}  // namespace

ResultLog::ResultLog(std::string path, std::vector<std::string> axis_names,
                     std::vector<std::string> metric_names, bool resume)
    : path_(std::move(path)),
      jsonl_(ends_with(path_, ".jsonl")),
      axis_names_(std::move(axis_names)),
      metric_names_(std::move(metric_names)) {
  if (!jsonl_ && !ends_with(path_, ".csv"))
    throw ConfigError(path_, "", "the sweep output must end in .csv or .jsonl");
  const bool exists = std::filesystem::exists(path_);
  if (exists && !resume) {
    throw ConfigError(path_, "",
                      "already exists; results are never overwritten (use --resume to continue it)");
  }
  if (!exists) {
    write_file_atomically(path_, [&](std::ostream& out) {
      if (!jsonl_) out << header() << "\n";
    });
    return;
  }
  // Resume: keep complete lines only (a kill can tear the last one), then check they are ours.
  std::string text = read_input_file(path_, InputKind::DATA);
  if (!text.empty() && text.back() != '\n') {
    text.erase(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    write_file_atomically(path_, [&](std::ostream& out) { out << text; });
  }
  std::istringstream lines(text);
  std::string line;
  std::size_t n = 0;
  while (std::getline(lines, line)) {
    ++n;
    if (!jsonl_ && n == 1) {
      if (line != header())
        throw ConfigError(path_, "line 1", "was written by a different sweep (columns differ)");
      continue;
    }
    if (!line.empty()) finished_.insert(parse_line(line, n).id);
  }
  if (!jsonl_ && n == 0) append_text(path_, header() + "\n");
}

std::string ResultLog::header() const {
  std::string h = "id";
  for (const auto& a : axis_names_) h += "," + csv_field(a);
  h += ",status";
  for (const auto& m : metric_names_) h += "," + m;
  return h + ",error";
}

std::string ResultLog::format_row(const Row& row) const {
  if (jsonl_) {
    nlohmann::ordered_json j;
    j["id"] = row.id;
    j["params"] = nlohmann::ordered_json::object();
    for (const auto& a : axis_names_) j["params"][a] = row.axis_values.count(a) ? row.axis_values.at(a) : "";
    j["status"] = row.ok ? "ok" : "error";
    j["metrics"] = nlohmann::ordered_json::object();
    for (const auto& m : metric_names_) {
      if (row.metrics.count(m)) j["metrics"][m] = row.metrics.at(m);
    }
    if (!row.ok) j["error"] = row.error;
    return j.dump();
  }
  std::string line = csv_field(row.id);
  for (const auto& a : axis_names_)
    line += "," + csv_field(row.axis_values.count(a) ? row.axis_values.at(a) : "");
  line += row.ok ? ",ok" : ",error";
  for (const auto& m : metric_names_) line += "," + (row.metrics.count(m) ? number(row.metrics.at(m)) : "");
  return line + "," + csv_field(row.error);
}

Row ResultLog::parse_line(const std::string& line, std::size_t line_number) const {
  Row row;
  const std::string where = "line " + std::to_string(line_number);
  if (jsonl_) {
    try {
      const nlohmann::json j = parse_json_text(line, path_);
      row.id = j.at("id").get<std::string>();
      for (auto& [k, v] : j.at("params").items()) row.axis_values[k] = v.get<std::string>();
      row.ok = j.at("status").get<std::string>() == "ok";
      for (auto& [k, v] : j.at("metrics").items()) row.metrics[k] = v.get<double>();
      if (j.contains("error")) row.error = j["error"].get<std::string>();
    } catch (const std::exception&) {
      throw ConfigError(path_, where, "is not a sweep result row");
    }
    return row;
  }
  auto f = split_csv(line);
  if (f.size() != axis_names_.size() + metric_names_.size() + 3)
    throw ConfigError(path_, where, "has the wrong number of columns");
  std::size_t i = 0;
  row.id = f[i++];
  for (const auto& a : axis_names_) row.axis_values[a] = f[i++];
  row.ok = f[i++] == "ok";
  for (const auto& m : metric_names_) {
    if (!f[i].empty() && !read_number(f[i], row.metrics[m])) {
      throw ConfigError(path_, where,
                        "column " + std::to_string(i + 1) + " (" + m + ") is not a finite number");
    }
    ++i;
  }
  row.error = f[i];
  return row;
}

void ResultLog::append(const Row& row) {
  std::lock_guard<std::mutex> lock(mutex_);
  append_text(path_, format_row(row) + "\n");
  finished_.insert(row.id);
}

std::vector<Row> ResultLog::read_all() const {
  std::istringstream in(read_input_file(path_, InputKind::DATA));
  std::vector<Row> rows;
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if ((!jsonl_ && n == 1) || line.empty()) continue;
    rows.push_back(parse_line(line, n));
  }
  return rows;
}

std::map<std::string, std::string> ResultLog::lines_by_id() const {
  std::map<std::string, std::string> by_id;
  std::istringstream in(read_input_file(path_, InputKind::DATA));
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if ((!jsonl_ && n == 1) || line.empty()) continue;
    by_id[parse_line(line, n).id] = line;
  }
  return by_id;
}

void ResultLog::finalize(const std::vector<Point>& order) {
  std::lock_guard<std::mutex> lock(mutex_);
  write_in_order(lines_by_id(), order);
}

void ResultLog::write_in_order(const std::map<std::string, std::string>& lines,
                               const std::vector<Point>& order) {
  write_file_atomically(path_, [&](std::ostream& out) {
    if (!jsonl_) out << header() << "\n";
    for (const auto& p : order) {
      if (auto it = lines.find(p.id); it != lines.end()) out << it->second << "\n";
    }
  });
}

}  // namespace moesim::sweep
