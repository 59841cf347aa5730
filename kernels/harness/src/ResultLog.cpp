#include "moesim/kernels/ResultLog.hpp"

#include <chrono>
#include <ctime>
#include <stdexcept>

namespace moesim::kernels {

std::string utc_timestamp_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

ResultLog::ResultLog(ToolIdentity identity, std::vector<std::string> command_line, JsonValue options,
                     std::ostream& text, const std::string& json_path)
    : text_(text) {
  root_.set("schema_version", kResultSchemaVersion);
  root_.set("tool", "moesim-kernels");
  root_.set("tool_version", identity.tool_version);
  root_.set("git_sha", identity.git_sha);
  root_.set("benchmark", identity.benchmark);
  JsonValue args = JsonValue::array();
  for (const std::string& arg : command_line) args.push_back(arg);
  root_.set("args", args);
  root_.set("options", std::move(options));
  root_.set("start_time", utc_timestamp_now());
  if (!json_path.empty()) {
    file_ = std::make_unique<ExclusiveFile>(json_path);
    json_path_ = file_->path();
  }
}

ResultLog::~ResultLog() {
  if (finished_ || !file_) return;
  try {
    write_json(false);
  } catch (const std::exception&) {
    // A destructor must not throw; the text log already holds the rows.
  }
}

void ResultLog::add_context(const std::string& key, JsonValue value) {
  root_.set(key, std::move(value));
}

void ResultLog::comment(const std::string& line) {
  text_ << "# " << line << "\n" << std::flush;
}

void ResultLog::warning(const std::string& line) {
  text_ << "# ***WARNING*** " << line << "\n" << std::flush;
  warnings_.push_back(line);
}

void ResultLog::start_table(const TextTable& table) {
  table_ = std::make_unique<TextTable>(table);
  text_ << "#\n" << table_->header() << std::flush;
}

void ResultLog::add_row(const std::vector<std::string>& cells, JsonValue record) {
  if (!table_) throw std::logic_error("ResultLog::add_row before start_table");
  text_ << table_->row(cells) << std::flush;
  results_.push_back(std::move(record));
}

void ResultLog::set_summary(const std::string& key, JsonValue value) {
  summary_.set(key, std::move(value));
}

void ResultLog::finish() {
  if (finished_) return;
  if (file_) {
    write_json(true);
    text_ << "# JSON results: " << json_path_ << "\n" << std::flush;
  }
  finished_ = true;
}

void ResultLog::write_json(bool complete) {
  JsonValue root = root_;
  root.set("warnings", warnings_);
  root.set("results", results_);
  root.set("summary", summary_);
  root.set("end_time", utc_timestamp_now());
  root.set("complete", complete);
  file_->write(root.dump(1) + "\n");
  file_->close();
}

}  // namespace moesim::kernels
