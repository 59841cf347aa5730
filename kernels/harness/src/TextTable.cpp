#include "moesim/kernels/TextTable.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace moesim::kernels {
namespace {

std::string pad_left(const std::string& text, int width) {
  return fmt::format("{:>{}}", text, width);
}

// printf's spelling of non-finite values, without the sign of a NaN.
const char* non_finite(double value) {
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

}  // namespace

std::string TextTable::header() const {
  std::string names = "#";
  std::string units = "#";
  for (const TextColumn& column : columns_) {
    names += " " + pad_left(column.name, column.width);
    units += " " + pad_left(column.unit.empty() ? "" : "(" + column.unit + ")", column.width);
  }
  return names + "\n" + units + "\n";
}

std::string TextTable::row(const std::vector<std::string>& cells) const {
  if (cells.size() != columns_.size()) {
    throw std::invalid_argument("table row has " + std::to_string(cells.size()) + " cells for " +
                                std::to_string(columns_.size()) + " columns");
  }
  std::string line = " ";
  for (std::size_t i = 0; i < cells.size(); ++i) line += " " + pad_left(cells[i], columns_[i].width);
  return line + "\n";
}

std::string format_fixed(double value, int precision) {
  if (!std::isfinite(value)) return non_finite(value);
  return fmt::format("{:.{}f}", value, precision);
}

std::string format_general(double value, int significant) {
  if (!std::isfinite(value)) return non_finite(value);
  return fmt::format("{:.{}g}", value, significant);
}

}  // namespace moesim::kernels
