/// .npy reading and writing: the magic, a Python-literal header dict, then raw C-order data.
/// The reader trusts nothing in the file: every size is checked before anything is allocated.
#include "iron/testing/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>

#include "iron/core/error.hpp"
#include "iron/testing/data.hpp"

namespace iron::testing {
namespace {

namespace fs = std::filesystem;

struct Descr {
  const char* text;
  DType dtype;
};
constexpr Descr kDescrs[] = {{"<f4", DType::F32}, {"<f2", DType::F16},  {"<i4", DType::I32},
                             {"<u4", DType::U32}, {"<u2", DType::U16},  {"|u1", DType::U8},
                             {"|i1", DType::I8},  {"|b1", DType::Bool}, {"|V2", DType::BF16}};

constexpr std::string_view kMagic = "\x93NUMPY";

DType dtype_of_descr(std::string_view descr, const std::string& path) {
  for (const Descr& d : kDescrs) {
    if (descr == d.text) return d.dtype;
  }
  throw Error(
      fmt::format("{}: unsupported element type '{}' (supported: <f4 <f2 <i4 <u4 <u2 |u1 "
                  "|i1 |b1, and |V2 as bf16)",
                  path, descr));
}

/// The header dict `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, read by a
/// small recursive-descent parser of exactly that subset of Python literals.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  struct Fields {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::uint64_t> shape;
  };

  Fields parse() {
    Fields f;
    bool have_descr = false;
    bool have_order = false;
    bool have_shape = false;
    expect('{', "at the start of the header");
    while (!accept('}')) {
      const std::string key = string_literal("a key");
      expect(':', fmt::format("after '{}'", key));
      if (key == "descr") {
        once(have_descr, key);
        f.descr = string_literal("the element type");
      } else if (key == "fortran_order") {
        once(have_order, key);
        f.fortran_order = boolean();
      } else if (key == "shape") {
        once(have_shape, key);
        f.shape = shape();
      } else {
        fail(fmt::format("unknown key '{}' (a .npy header has descr, fortran_order, shape)", key));
      }
      if (!accept(',')) {
        expect('}', "after a value");
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("text after the closing '}'");
    if (!have_descr || !have_order || !have_shape) {
      fail(fmt::format("no '{}'", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape"));
    }
    return f;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw Error(fmt::format("{}: bad .npy header: {}", path_, what));
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ == text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c, std::string_view where) {
    if (!accept(c)) fail(fmt::format("expected '{}' {}", c, where));
  }
  void once(bool& seen, std::string_view key) {
    if (seen) fail(fmt::format("'{}' given twice", key));
    seen = true;
  }

  std::string string_literal(std::string_view what) {
    skip_space();
    const char quote = pos_ < text_.size() ? text_[pos_] : '\0';
    if (quote != '\'' && quote != '"') fail(fmt::format("expected {} in quotes", what));
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail(fmt::format("unterminated string for {}", what));
    std::string out(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }

  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_).starts_with(word)) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    fail("fortran_order must be True or False");
  }

  /// `()`, `(N,)` or `(N, M, ...)`: non-negative integers that fit in 64 bits, at most
  /// kMaxNpyDims of them.
  std::vector<std::uint64_t> shape() {
    std::vector<std::uint64_t> dims;
    expect('(', "opening the shape");
    while (!accept(')')) {
      skip_space();
      const std::size_t start = pos_;
      if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      const std::string_view number = text_.substr(start, pos_ - start);
      if (number.empty() || !std::isdigit(static_cast<unsigned char>(number.back()))) {
        fail("expected a dimension (a non-negative integer) in the shape");
      }
      if (number.front() == '-') fail(fmt::format("negative dimension {} in the shape", number));
      std::uint64_t d = 0;
      const char* first = number.data() + (number.front() == '+' ? 1 : 0);
      const auto [end, ec] = std::from_chars(first, number.data() + number.size(), d);
      if (ec != std::errc() || end != number.data() + number.size()) {
        fail(fmt::format("dimension {} does not fit in 64 bits", number));
      }
      if (dims.size() == kMaxNpyDims) {
        fail(fmt::format("more than {} dimensions in the shape", kMaxNpyDims));
      }
      dims.push_back(d);
      if (!accept(',')) {
        expect(')', "closing the shape");
        break;
      }
    }
    return dims;
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

/// Reads exactly `size` bytes at the stream's position into `out`; false if the file is shorter.
bool read_exactly(std::ifstream& in, void* out, std::size_t size) {
  return static_cast<bool>(in.read(static_cast<char*>(out), static_cast<std::streamsize>(size)));
}

}  // namespace

std::optional<std::uint64_t> element_count(const std::vector<std::uint64_t>& shape) {
  std::uint64_t count = 1;
  for (const std::uint64_t d : shape) {
    if (__builtin_mul_overflow(count, d, &count)) return std::nullopt;
  }
  return count;
}

NpyArray read_npy(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) throw Error(fmt::format("{}: no such file", path));
  if (!fs::is_regular_file(status)) {
    throw Error(fmt::format("{}: not a regular file{}", path,
                            fs::is_directory(status) ? " (a directory)" : ""));
  }
  const std::uint64_t file_size = fs::file_size(path, error);
  std::ifstream in(path, std::ios::binary);
  if (error || !in) throw Error(fmt::format("cannot open {}", path));

  std::array<char, 12> preamble{};  // magic, version, and a 2- or 4-byte header length
  if (file_size < 10 || !read_exactly(in, preamble.data(), 10) ||
      std::string_view(preamble.data(), kMagic.size()) != kMagic) {
    throw Error(fmt::format("{} is not a .npy file (no \\x93NUMPY magic)", path));
  }
  const int major = static_cast<unsigned char>(preamble[6]);
  const int minor = static_cast<unsigned char>(preamble[7]);
  if (major < 1 || major > 3 || minor != 0) {
    throw Error(fmt::format("{}: .npy format version {}.{} is not supported (1.0, 2.0, 3.0 are)",
                            path, major, minor));
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  if (length_bytes == 4 && !read_exactly(in, preamble.data() + 10, 2)) {
    throw Error(fmt::format("{}: truncated .npy header", path));
  }
  std::uint64_t header_len = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) {
    header_len |= std::uint64_t{static_cast<unsigned char>(preamble[8 + i])} << (8 * i);
  }
  if (header_len > kMaxNpyHeaderBytes) {
    throw Error(fmt::format("{}: the .npy header claims {} bytes; a header has at most {}", path,
                            header_len, kMaxNpyHeaderBytes));
  }
  const std::uint64_t data_start = 8 + length_bytes + header_len;
  if (file_size < data_start) {
    throw Error(fmt::format("{}: truncated .npy header ({} bytes claimed, the file has {})", path,
                            header_len, file_size - 8 - length_bytes));
  }
  std::string header(header_len, '\0');
  if (!read_exactly(in, header.data(), header.size())) {
    throw Error(fmt::format("cannot read the header of {}", path));
  }
  const HeaderParser::Fields fields = HeaderParser(header, path).parse();
  if (fields.fortran_order) {
    throw Error(fmt::format("{}: Fortran-order arrays are not supported; save with C order", path));
  }
  NpyArray array;
  array.tensor.dtype = dtype_of_descr(fields.descr, path);
  array.shape = fields.shape;
  const std::optional<std::uint64_t> count = element_count(array.shape);
  std::uint64_t size = 0;
  if (!count || __builtin_mul_overflow(*count, dtype_size(array.tensor.dtype), &size)) {
    throw Error(fmt::format("{}: shape ({}) has more bytes than fit in 64 bits", path,
                            fmt::join(array.shape, ", ")));
  }
  if (file_size - data_start != size) {
    throw Error(fmt::format("{}: expected {} bytes of data for shape ({}), found {}", path, size,
                            fmt::join(array.shape, ", "), file_size - data_start));
  }
  array.tensor.bytes.resize(size);
  if (!read_exactly(in, array.tensor.bytes.data(), size)) {
    throw Error(fmt::format("cannot read the data of {}", path));
  }
  return array;
}

void write_npy(const std::string& path, const NpyArray& array) {
  const std::optional<std::uint64_t> count = element_count(array.shape);
  const std::uint64_t have = array.tensor.bytes.size() / dtype_size(array.tensor.dtype);
  if (!count || *count != have) {
    throw Error(fmt::format("cannot write {}: shape ({}) has {} elements, the data holds {}", path,
                            fmt::join(array.shape, ", "),
                            count ? fmt::format("{}", *count) : "more than 2^64", have));
  }
  runtime::HostTensor tensor = array.tensor;
  if (tensor.dtype == DType::BF16 || is_f8(tensor.dtype)) tensor = pack(unpack(tensor), DType::F32);
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
