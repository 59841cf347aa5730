#include "moesim/traces/TraceFile.hpp"

#include <zlib.h>

#include <memory>

#include "moesim/common/Error.hpp"
#include "moesim/common/InputFile.hpp"

namespace moesim::traces {
namespace {

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string inflate_gzip(const std::string& bytes, const std::string& path) {
  z_stream stream{};
  // 16 + MAX_WBITS: a gzip header and trailer around the deflate stream.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)
    throw ConfigError(path, "", "cannot start gzip decoding");
  std::unique_ptr<z_stream, decltype(&inflateEnd)> guard(&stream, inflateEnd);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  const std::size_t limit = input_limit_bytes(InputKind::DATA);
  std::string out;
  char buffer[1 << 16];
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    status = inflate(&stream, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END)
      throw ConfigError(
          path, "", "is not a valid gzip file (" + std::string(stream.msg ? stream.msg : "truncated") + ")");
    out.append(buffer, sizeof buffer - stream.avail_out);
    if (out.size() > limit)
      throw ConfigError(path, "",
                        "expands to more than " + std::to_string(limit >> 20) +
                            " MiB: too large for a trace (MOESIM_MAX_INPUT_MB)");
    if (status == Z_OK && stream.avail_in == 0 && stream.avail_out != 0)
      throw ConfigError(path, "", "is not a valid gzip file (truncated)");
  }
  return out;
}

}  // namespace

std::string read_trace_text(const std::string& path) {
  std::string bytes = read_input_file(path, InputKind::DATA);
  return is_gzip(bytes) ? inflate_gzip(bytes, path) : bytes;
}

}  // namespace moesim::traces
