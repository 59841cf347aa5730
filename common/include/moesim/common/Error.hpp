#pragma once
/** @file Error hierarchy shared by every moesim library. Only the CLI's main() catches. */
#include <stdexcept>
#include <string>

namespace moesim {

/** @brief Base of every error moesim throws on purpose. */
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/**
 * @brief Bad user input: a file, a JSON value or a flag. The CLI maps it to exit code 2.
 * what() is one line: "file: /json/pointer = value: rule".
 */
class ConfigError : public Error {
 public:
  ConfigError(std::string file, std::string json_pointer, const std::string& message)
      : Error(format(file, json_pointer, message)),
        file_(std::move(file)),
        pointer_(std::move(json_pointer)) {}
  const std::string& file() const { return file_; }
  const std::string& json_pointer() const { return pointer_; }

 private:
  static std::string format(const std::string& file, const std::string& pointer, const std::string& message) {
    std::string out = file.empty() ? std::string("<input>") : file;
    out += ": ";
    if (!pointer.empty()) out += pointer + " ";
    out += message;
    return out;
  }
  std::string file_;
  std::string pointer_;
};

/** @brief A configuration that is well-formed but impossible (EP not dividing experts...). Exit code 2. */
class ScheduleError : public Error {
 public:
  using Error::Error;
};

/** @brief Broken internal invariant: a moesim bug, never user input. Exit code 1. */
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace moesim
