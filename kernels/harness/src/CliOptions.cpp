#include "moesim/kernels/CliOptions.hpp"

#include <CLI/CLI.hpp>
#include <limits>

#include "moesim/kernels/SizeSweep.hpp"

namespace moesim::kernels {
namespace {

std::string names(const std::string& name, char short_name) {
  return short_name != 0 ? std::string("-") + short_name + ",--" + name : "--" + name;
}

// CLI11 reports a second declaration of a name with OptionAlreadyAdded; a benchmark that does so has a bug.
template <typename Declare>
CLI::Option* declare(const std::string& name, Declare&& add) {
  try {
    return add();
  } catch (const CLI::ConstructionError& error) {
    throw std::logic_error("option --" + name + " declared twice: " + error.what());
  }
}

}  // namespace

CliOptions::CliOptions(std::string program, std::string description)
    : app_(std::make_unique<CLI::App>(std::move(description), std::move(program))) {
  app_->option_defaults()->always_capture_default();
}

CliOptions::~CliOptions() = default;
CliOptions::CliOptions(CliOptions&&) noexcept = default;
CliOptions& CliOptions::operator=(CliOptions&&) noexcept = default;

void CliOptions::remember(const std::string& name, std::function<Json()> value) {
  values_.emplace_back(name, std::move(value));
}

void CliOptions::add_flag(const std::string& name, char short_name, bool* target, const std::string& help) {
  declare(name,
          [&] { return app_->add_flag(names(name, short_name), *target, help)->disable_flag_override(); });
  remember(name, [target] { return Json(*target); });
}

void CliOptions::add_int(const std::string& name, char short_name, std::int64_t* target,
                         const std::string& help, std::int64_t min_value) {
  declare(name, [&] {
    auto* option = app_->add_option(names(name, short_name), *target, help);
    if (min_value > std::numeric_limits<std::int64_t>::min())
      option->check(CLI::Range(min_value, std::numeric_limits<std::int64_t>::max())
                        .description(">= " + std::to_string(min_value)));
    return option;
  });
  remember(name, [target] { return Json(*target); });
}

void CliOptions::add_double(const std::string& name, char short_name, double* target,
                            const std::string& help) {
  declare(name, [&] { return app_->add_option(names(name, short_name), *target, help); });
  remember(name, [target] { return Json(*target); });
}

void CliOptions::add_bytes(const std::string& name, char short_name, std::uint64_t* target,
                           const std::string& help) {
  declare(name, [&] {
    return app_->add_option(names(name, short_name), *target, help)
        ->transform(CLI::AsSizeValue(false))  // K = 1024
        ->default_str(format_bytes(*target));
  });
  remember(name, [target] { return Json(*target); });
}

void CliOptions::add_string(const std::string& name, char short_name, std::string* target,
                            const std::string& help) {
  declare(name, [&] { return app_->add_option(names(name, short_name), *target, help); });
  remember(name, [target] { return Json(*target); });
}

void CliOptions::add_int_list(const std::string& name, char short_name, std::vector<std::int64_t>* target,
                              const std::string& help) {
  declare(name, [&] { return app_->add_option(names(name, short_name), *target, help)->delimiter(','); });
  remember(name, [target] { return Json(*target); });
}

void CliOptions::add_string_list(const std::string& name, char short_name, std::vector<std::string>* target,
                                 const std::string& help) {
  declare(name, [&] { return app_->add_option(names(name, short_name), *target, help)->delimiter(','); });
  remember(name, [target] { return Json(*target); });
}

bool CliOptions::parse(int argc, const char* const* argv) {
  command_line_.assign(argv, argv + argc);
  try {
    app_->parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return false;
  } catch (const CLI::ParseError& error) {
    throw ArgError(error.what());
  }
  return true;
}

std::string CliOptions::usage() const {
  return app_->help();
}

Json CliOptions::values_as_json() const {
  Json values = Json::object();
  for (const auto& [name, value] : values_) values[name] = value();
  return values;
}

}  // namespace moesim::kernels
