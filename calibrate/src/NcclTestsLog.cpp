#include "moesim/calibrate/NcclTestsLog.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <set>
#include <sstream>

#include "JsonText.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/NumberText.hpp"

namespace moesim::calibrate {
namespace {

constexpr int kColumns = 13;
const char* const kColumnNames = "size count type redop root time algbw busbw #wrong time algbw busbw #wrong";
// Input limits (docs/limits.md): nccl-tests runs at most a few million ranks, sizes up to a few GiB and
// prints times with two decimals; anything outside these is not a measurement.
constexpr int kMaxRank = 1 << 20;

/** A column's number, its name for messages and the range a printed value can have. */
struct Column {
  int index;
  const char* name;
  double minimum;
  double maximum;
};

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

bool is_unsigned_integer(const std::string& word) {
  return !word.empty() &&
         std::all_of(word.begin(), word.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool parse_number(const std::string& word, double& value) {
  const char* end = word.data() + word.size();
  auto [ptr, ec] = std::from_chars(word.data(), end, value);
  return ec == std::errc() && ptr == end;
}

// nccl-tests program name -> profile collective spelling.
std::string op_of_program(const std::string& program) {
  if (program == "all_reduce_perf") return "all_reduce";
  if (program == "all_gather_perf") return "all_gather";
  if (program == "reduce_scatter_perf") return "reduce_scatter";
  if (program == "alltoall_perf") return "all_to_all";
  const std::string suffix = "_perf";
  if (program.size() > suffix.size() &&
      program.compare(program.size() - suffix.size(), suffix.size(), suffix) == 0)
    return program.substr(0, program.size() - suffix.size());
  return program;
}

std::string op_of_file_name(const std::string& file) {
  std::string name = std::filesystem::path(file).filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::pair<const char*, const char*> patterns[] = {
      {"all_reduce", "all_reduce"}, {"allreduce", "all_reduce"},          {"all_gather", "all_gather"},
      {"allgather", "all_gather"},  {"reduce_scatter", "reduce_scatter"}, {"reducescatter", "reduce_scatter"},
      {"alltoall", "all_to_all"},   {"all_to_all", "all_to_all"}};
  for (const auto& [pattern, op] : patterns) {
    if (name.find(pattern) != std::string::npos) return op;
  }
  return "";
}

// "nccl-library=22807" -> "2.28.7"
std::string nccl_code_version(const std::string& word) {
  const std::size_t eq = word.find('=');
  if (eq == std::string::npos) return "";
  const std::string digits = word.substr(eq + 1);
  long code = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), code);
  if (!is_unsigned_integer(digits) || error != std::errc() || end != digits.data() + digits.size()) return "";
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

void read_header(const std::vector<std::string>& words, const std::string& where, NcclTestsLog& log,
                 std::set<int>& ranks, std::set<std::string>& hosts) {
  // words[0] == "#"
  if (words.size() >= 5 && words[1] == "Collective" && words[2] == "test" && words[3] == "starting:") {
    log.program = words[4];
  } else if (words.size() >= 4 && (words[1] == "nccl-tests" || words[1] == "rccl-tests") &&
             words[2] == "version") {
    log.version = words[1] + " " + words[3];
    for (const std::string& w : words) {
      if (w.rfind("nccl-library=", 0) == 0) log.version += ", NCCL " + nccl_code_version(w);
    }
  } else if (words.size() >= 9 && words[1] == "Rank" && is_unsigned_integer(words[2])) {
    int rank = 0;
    const auto [end, error] = std::from_chars(words[2].data(), words[2].data() + words[2].size(), rank);
    if (error != std::errc() || end != words[2].data() + words[2].size() || rank >= kMaxRank) {
      throw ConfigError(where, "",
                        "rank \"" + words[2] + "\": expected a rank below " + std::to_string(kMaxRank));
    }
    ranks.insert(rank);
    auto on = std::find(words.begin(), words.end(), "on");
    if (on != words.end() && on + 1 != words.end()) hosts.insert(*(on + 1));
    auto bus = std::find_if(words.begin(), words.end(),
                            [](const std::string& w) { return !w.empty() && w[0] == '['; });
    if (rank == 0 && bus != words.end()) {
      std::string device;
      for (auto it = bus + 1; it != words.end(); ++it) device += (device.empty() ? "" : " ") + *it;
      log.device = device;
    }
  }
}

}  // namespace

std::vector<CollectiveCase> NcclTestsLog::cases() const {
  std::vector<CollectiveCase> out;
  for (const NcclTestsRow& row : rows) {
    if (row.bytes <= 0 || row.time_us <= 0) continue;
    out.push_back({op, ranks, hosts, row.bytes, row.time_us * 1e-6, file});
  }
  return out;
}

namespace {

// A data row: 13 columns, each number in the range nccl-tests can print.
NcclTestsRow read_row(const std::vector<std::string>& words, int line_number, const std::string& where) {
  if (static_cast<int>(words.size()) != kColumns) {
    throw ConfigError(where, "",
                      "expected " + std::to_string(kColumns) + " columns (" + kColumnNames + "), got " +
                          std::to_string(words.size()));
  }
  NcclTestsRow row;
  row.line = line_number;
  row.type = words[2];
  row.redop = words[3];
  double root = 0;
  // Times are 0 (not run) or at least the 0.01 us nccl-tests prints; rates and sizes below a petabyte.
  const std::pair<Column, double*> numbers[] = {
      {{0, "size (B)", 0, 1e15}, &row.bytes},
      {{1, "count", 0, 1e15}, &row.count},
      {{4, "root", -1, kMaxRank}, &root},
      {{5, "time (us)", 0, 1e12}, &row.time_us},
      {{6, "algbw (GB/s)", 0, 1e7}, &row.algbw_GBps},
      {{7, "busbw (GB/s)", 0, 1e7}, &row.busbw_GBps},
      {{9, "in-place time (us)", 0, 1e12}, &row.in_place_time_us},
      {{10, "in-place algbw (GB/s)", 0, 1e7}, &row.in_place_algbw_GBps},
      {{11, "in-place busbw (GB/s)", 0, 1e7}, &row.in_place_busbw_GBps}};
  for (const auto& [column, target] : numbers) {
    const std::string& word = words[static_cast<std::size_t>(column.index)];
    const std::string shown = "column " + std::to_string(column.index + 1) + " = \"" +
                              (word.size() > 40 ? word.substr(0, 40) + "..." : word) + "\": ";
    if (!parse_number(word, *target))
      throw ConfigError(where, "", shown + "expected a number (" + kColumnNames + ")");
    if (!(*target >= column.minimum && *target <= column.maximum)) {
      throw ConfigError(where, "",
                        shown + "expected a " + column.name + " in [" + format_number(column.minimum) + ", " +
                            format_number(column.maximum) + "]");
    }
  }
  for (const double time : {row.time_us, row.in_place_time_us}) {
    if (time > 0 && time < 0.01)
      throw ConfigError(where, "", "time " + format_number(time) + " us: expected 0 or at least 0.01 us");
  }
  if (words[8] != "N/A" && (!parse_number(words[8], row.wrong) || !(row.wrong >= 0 && row.wrong <= 1e15))) {
    throw ConfigError(where, "",
                      "column 9 (#wrong) = \"" + words[8].substr(0, 40) + "\": expected a count or N/A");
  }
  return row;
}

}  // namespace

NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& file) {
  NcclTestsLog log;
  log.file = file;
  std::set<int> ranks;
  std::set<std::string> hosts;
  std::istringstream in(text);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> words = split_words(line);
    if (words.empty()) continue;
    const std::string where = file + ":" + std::to_string(line_number);
    if (words[0][0] == '#') {
      if (words[0] == "#") read_header(words, where, log, ranks, hosts);
      continue;
    }
    if (!is_unsigned_integer(words[0])) continue;  // NCCL INFO lines, MPI chatter, rccl-tests banners
    log.rows.push_back(read_row(words, line_number, where));
  }
  if (log.rows.empty()) {
    throw ConfigError(file, "",
                      std::string("no nccl-tests result rows (lines of ") + kColumnNames +
                          "): not an nccl-tests / rccl-tests log");
  }
  log.op = log.program.empty() ? op_of_file_name(file) : op_of_program(log.program);
  if (log.op.empty()) {
    throw ConfigError(
        file, "",
        "cannot tell the collective: no '# Collective test starting: X_perf' line and the file name "
        "names none of all_reduce, all_gather, reduce_scatter, alltoall");
  }
  if (ranks.empty()) {
    throw ConfigError(file, "",
                      "no '#  Rank N Group G Pid P on HOST device D' lines: cannot tell the group size");
  }
  log.ranks = *ranks.rbegin() + 1;
  log.hosts = static_cast<int>(std::max<std::size_t>(hosts.size(), 1));
  return log;
}

NcclTestsLog load_nccl_tests_log(const std::string& path) {
  return parse_nccl_tests_log(detail::read_text_file(path), path);
}

}  // namespace moesim::calibrate
