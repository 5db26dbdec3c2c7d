/// .npy reading and writing: the magic, a Python-literal header dict, then raw C-order data.
#include "iron/testing/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "iron/core/error.hpp"
#include "iron/testing/data.hpp"

namespace iron::testing {
namespace {

struct Descr {
  const char* text;
  DType dtype;
};
constexpr Descr kDescrs[] = {{"<f4", DType::F32}, {"<f2", DType::F16},  {"<i4", DType::I32},
                             {"<u4", DType::U32}, {"<u2", DType::U16},  {"|u1", DType::U8},
                             {"|i1", DType::I8},  {"|b1", DType::Bool}, {"|V2", DType::BF16}};

DType dtype_of_descr(const std::string& descr, const std::string& path) {
  for (const Descr& d : kDescrs) {
    if (descr == d.text) return d.dtype;
  }
  throw Error(
      fmt::format("{}: unsupported element type '{}' (supported: <f4 <f2 <i4 <u4 <u2 |u1 "
                  "|i1 |b1, and |V2 as bf16)",
                  path, descr));
}

std::string header_field(const std::string& header, const std::string& key,
                         const std::string& path) {
  const std::regex pattern("'" + key + R"('\s*:\s*('[^']*'|True|False|\([^)]*\)))");
  std::smatch m;
  if (!std::regex_search(header, m, pattern)) {
    throw Error(fmt::format("{}: the .npy header has no '{}'", path, key));
  }
  std::string value = m[1];
  if (value.front() == '\'') value = value.substr(1, value.size() - 2);
  return value;
}

std::vector<std::uint64_t> parse_shape(const std::string& text) {
  std::vector<std::uint64_t> shape;
  const std::regex number(R"(\d+)");
  for (std::sregex_iterator it(text.begin(), text.end(), number), end; it != end; ++it) {
    shape.push_back(std::stoull(it->str()));
  }
  return shape;
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open {}", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    throw Error(fmt::format("{} is not a .npy file (no \\x93NUMPY magic)", path));
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) {
    header_len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  }
  const std::size_t data_start = 8 + length_bytes + header_len;
  if (bytes.size() < data_start) throw Error(fmt::format("{}: truncated .npy header", path));
  const std::string header = bytes.substr(8 + length_bytes, header_len);
  if (header_field(header, "fortran_order", path) != "False") {
    throw Error(fmt::format("{}: Fortran-order arrays are not supported; save with C order", path));
  }
  NpyArray array;
  array.tensor.dtype = dtype_of_descr(header_field(header, "descr", path), path);
  array.shape = parse_shape(header_field(header, "shape", path));
  std::uint64_t count = 1;
  for (const auto d : array.shape) count *= d;
  const std::size_t size = count * dtype_size(array.tensor.dtype);
  if (bytes.size() - data_start != size) {
    throw Error(fmt::format("{}: expected {} bytes of data for shape ({}), found {}", path, size,
                            fmt::join(array.shape, ", "), bytes.size() - data_start));
  }
  const auto* data = reinterpret_cast<const std::byte*>(bytes.data() + data_start);
  array.tensor.bytes.assign(data, data + size);
  return array;
}

void write_npy(const std::string& path, const NpyArray& array) {
  runtime::HostTensor tensor = array.tensor;
  if (tensor.dtype == DType::BF16) tensor = pack(unpack(tensor), DType::F32);
  std::string descr;
  for (const Descr& d : kDescrs) {
    if (d.dtype == tensor.dtype) descr = d.text;
  }
  std::string shape = fmt::format("{}", fmt::join(array.shape, ", "));
  if (array.shape.size() == 1) shape += ",";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // Pad with spaces so the data starts on a 64-byte boundary; the header ends with '\n'.
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xFF),
                       static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(tensor.bytes.data()),
            static_cast<std::streamsize>(tensor.bytes.size()));
  if (!out) throw Error(fmt::format("cannot write {}", path));
}

}  // namespace iron::testing
