#include "moesim/kernels/ArgParser.hpp"

#include <sstream>

#include "moesim/kernels/SizeSweep.hpp"

namespace moesim::kernels {
namespace {

std::int64_t parse_int(const std::string& name, const std::string& text) {
  std::size_t used = 0;
  std::int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw ArgError("--" + name + ": '" + text + "' is not an integer");
  return value;
}

std::string join_ints(const std::vector<std::int64_t>& values) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text;
}

}  // namespace

ArgParser::ArgParser(std::string program, std::string description)
    : program_(std::move(program)), description_(std::move(description)) {}

void ArgParser::add(Option option) {
  for (const Option& existing : options_) {
    if (existing.name == option.name ||
        (option.short_name != 0 && existing.short_name == option.short_name)) {
      throw std::logic_error("option --" + option.name + " declared twice");
    }
  }
  options_.push_back(std::move(option));
}

void ArgParser::add_flag(const std::string& name, char short_name, bool* target, const std::string& help) {
  add({name, short_name, help, false, [target](const std::string&) { *target = true; },
       [target] { return JsonValue(*target); }, [target] { return std::string(*target ? "on" : "off"); }});
}

void ArgParser::add_int(const std::string& name, char short_name, std::int64_t* target,
                        const std::string& help, std::int64_t min_value) {
  add({name, short_name, help, true,
       [name, target, min_value](const std::string& text) {
         const std::int64_t value = parse_int(name, text);
         if (value < min_value) {
           throw ArgError("--" + name + ": " + text + " is below the minimum " + std::to_string(min_value));
         }
         *target = value;
       },
       [target] { return JsonValue(static_cast<long long>(*target)); },
       [target] { return std::to_string(*target); }});
}

void ArgParser::add_double(const std::string& name, char short_name, double* target,
                           const std::string& help) {
  add({name, short_name, help, true,
       [name, target](const std::string& text) {
         std::size_t used = 0;
         try {
           *target = std::stod(text, &used);
         } catch (const std::exception&) {
           used = 0;
         }
         if (used == 0 || used != text.size())
           throw ArgError("--" + name + ": '" + text + "' is not a number");
       },
       [target] { return JsonValue(*target); },
       [target] {
         std::ostringstream out;
         out << *target;
         return out.str();
       }});
}

void ArgParser::add_bytes(const std::string& name, char short_name, std::uint64_t* target,
                          const std::string& help) {
  add({name, short_name, help, true,
       [name, target](const std::string& text) {
         try {
           *target = parse_bytes(text);
         } catch (const std::invalid_argument& error) {
           throw ArgError("--" + name + ": " + error.what());
         }
       },
       [target] { return JsonValue(static_cast<unsigned long long>(*target)); },
       [target] { return format_bytes(*target); }});
}

void ArgParser::add_string(const std::string& name, char short_name, std::string* target,
                           const std::string& help) {
  add({name, short_name, help, true, [target](const std::string& text) { *target = text; },
       [target] { return JsonValue(*target); }, [target] { return *target; }});
}

void ArgParser::add_int_list(const std::string& name, char short_name, std::vector<std::int64_t>* target,
                             const std::string& help) {
  add({name, short_name, help, true,
       [name, target](const std::string& text) {
         std::vector<std::int64_t> values;
         std::stringstream stream(text);
         std::string item;
         while (std::getline(stream, item, ',')) values.push_back(parse_int(name, item));
         if (values.empty()) throw ArgError("--" + name + ": expected a comma-separated list of integers");
         *target = std::move(values);
       },
       [target] {
         JsonValue values = JsonValue::array();
         for (std::int64_t value : *target) values.push_back(static_cast<long long>(value));
         return values;
       },
       [target] { return join_ints(*target); }});
}

const ArgParser::Option& ArgParser::lookup_long(const std::string& name) const {
  for (const Option& option : options_) {
    if (option.name == name) return option;
  }
  throw ArgError("unknown option --" + name + " (see --help)");
}

const ArgParser::Option& ArgParser::lookup_short(char short_name) const {
  for (const Option& option : options_) {
    if (option.short_name == short_name) return option;
  }
  throw ArgError(std::string("unknown option -") + short_name + " (see --help)");
}

bool ArgParser::parse(int argc, const char* const* argv) {
  command_line_.assign(argv, argv + argc);
  for (int i = 1; i < argc; ++i) {
    const std::string token = argv[i];
    if (token == "-h" || token == "--help") return false;
    const Option* option = nullptr;
    std::string value;
    bool has_inline_value = false;
    if (token.rfind("--", 0) == 0) {
      const std::size_t equals = token.find('=');
      option = &lookup_long(token.substr(2, equals == std::string::npos ? std::string::npos : equals - 2));
      if (equals != std::string::npos) {
        value = token.substr(equals + 1);
        has_inline_value = true;
      }
    } else if (token.size() == 2 && token[0] == '-') {
      option = &lookup_short(token[1]);
    } else {
      throw ArgError("unexpected argument '" + token + "' (options start with - or --)");
    }
    if (!option->takes_value) {
      if (has_inline_value) throw ArgError("--" + option->name + " takes no value");
      option->assign("");
      continue;
    }
    if (!has_inline_value) {
      if (i + 1 >= argc) throw ArgError("--" + option->name + " needs a value");
      value = argv[++i];
    }
    option->assign(value);
  }
  return true;
}

std::string ArgParser::usage() const {
  std::ostringstream out;
  out << "Usage: " << program_ << " [options]\n" << description_ << "\n\nOptions:\n";
  for (const Option& option : options_) {
    std::string names = option.short_name ? std::string("  -") + option.short_name + ", " : "      ";
    names += "--" + option.name + (option.takes_value ? " <v>" : "");
    if (names.size() < 32) names.append(32 - names.size(), ' ');
    out << names << option.help << " [" << option.current_text() << "]\n";
  }
  out << "  -h, --help                    this text\n";
  return out.str();
}

JsonValue ArgParser::values_as_json() const {
  JsonValue values = JsonValue::object();
  for (const Option& option : options_) values.set(option.name, option.current());
  return values;
}

}  // namespace moesim::kernels
