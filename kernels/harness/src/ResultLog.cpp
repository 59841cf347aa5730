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

ResultLog::ResultLog(ToolIdentity identity, std::vector<std::string> command_line, Json options,
                     std::ostream& text, const std::string& json_path)
    : text_(text) {
  root_["schema_version"] = kResultSchemaVersion;
  root_["tool"] = "moesim-kernels";
  root_["tool_version"] = identity.tool_version;
  root_["git_sha"] = identity.git_sha;
  root_["benchmark"] = identity.benchmark;
  root_["args"] = command_line;
  root_["options"] = std::move(options);
  root_["start_time"] = utc_timestamp_now();
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

void ResultLog::add_context(const std::string& key, Json value) {
  root_[key] = std::move(value);
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

void ResultLog::add_row(const std::vector<std::string>& cells, Json record) {
  if (!table_) throw std::logic_error("ResultLog::add_row before start_table");
  text_ << table_->row(cells) << std::flush;
  results_.push_back(std::move(record));
}

void ResultLog::set_summary(const std::string& key, Json value) {
  summary_[key] = std::move(value);
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
  Json root = root_;
  root["warnings"] = warnings_;
  root["results"] = results_;
  root["summary"] = summary_;
  root["end_time"] = utc_timestamp_now();
  root["complete"] = complete;
  // An argument or a device string need not be UTF-8: replace what is not rather than fail the run.
  file_->write(root.dump(1, ' ', false, Json::error_handler_t::replace) + "\n");
  file_->close();
}

}  // namespace moesim::kernels
