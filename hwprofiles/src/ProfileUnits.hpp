#pragma once
/**
 * @file The unit factors behind the JSON key suffixes (private to hwprofiles). A file value times
 * its factor is the SI value; the parser multiplies, the validator and writer divide to show a
 * value in the file's own units.
 */
#include "moesim/common/NumberText.hpp"

namespace moesim::hw::units {

inline constexpr double kTflops = 1e12;          ///< _tflops (TFLOP/s) → FLOP/s
inline constexpr double kGB = 1e9;               ///< _GB → bytes (decimal, as HBM is marketed)
inline constexpr double kGBps = 1e9;             ///< _GBps → bytes/s
inline constexpr double kGbps = 1e9 / 8.0;       ///< _gbps (Gbit/s) → bytes/s
inline constexpr double kMiB = 1024.0 * 1024.0;  ///< _MiB → bytes (caches are power-of-two sized)
inline constexpr double kMHz = 1e6;              ///< _mhz → Hz
inline constexpr double kUs = 1e-6;              ///< _us → seconds
inline constexpr double kNs = 1e-9;              ///< _ns → seconds
inline constexpr double kPjPerByte = 1e-12;      ///< _pj_per_byte (picojoules per byte) → J/byte
inline constexpr double kOne = 1.0;              ///< dimensionless or already SI (_w: watts)

/** @brief A number as a person would write it in the file: 15 significant digits, no trailing zeros. */
using moesim::format_number;

}  // namespace moesim::hw::units
