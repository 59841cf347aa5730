#pragma once
/**
 * @file nccl-tests style text tables: two '#'-prefixed header rows (names, then units) and
 * right-aligned data rows that carry no '#', so `grep -v '^#'` yields the data.
 *
 *   #        size   count    time     min  ...  #wrong
 *   #         (B)  (elts)    (us)    (us)  ...
 *          1048576  262144   12.34   12.01  ...       0
 */
#include <string>
#include <vector>

namespace moesim::kernels {

/** @brief One table column: its name, its unit ("" for none) and its width in characters. */
struct TextColumn {
  std::string name;
  std::string unit;
  int width = 10;
};

/** @brief Formats header and data rows for a fixed list of columns. */
class TextTable {
 public:
  explicit TextTable(std::vector<TextColumn> columns) : columns_(std::move(columns)) {}

  const std::vector<TextColumn>& columns() const { return columns_; }
  /** @brief The two header lines (names, units), each starting with '#', newline-terminated. */
  std::string header() const;
  /** @brief One data row; throws std::invalid_argument if the cell count differs from the columns. */
  std::string row(const std::vector<std::string>& cells) const;

 private:
  std::vector<TextColumn> columns_;
};

/** @brief Fixed-point text with `precision` decimals; "nan"/"inf" for non-finite values. */
std::string format_fixed(double value, int precision);

/** @brief Text with about `significant` significant digits, switching to exponent form when tiny. */
std::string format_general(double value, int significant = 3);

}  // namespace moesim::kernels
