/// Seeded test data, rounding through a dtype, and little-endian packing for every dtype.
#include "iron/testing/data.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <limits>

#include "iron/core/error.hpp"
#include "iron/core/fp8.hpp"
#include "iron/core/half.hpp"

namespace iron::testing {
namespace {

/// Truncates toward zero and saturates to the dtype's range; NaN becomes 0; bool is v != 0.
double to_integer(float v, DType dt) {
  if (dt == DType::Bool) return v != 0.0f ? 1.0 : 0.0;
  if (std::isnan(v)) return 0.0;
  const IntegerRange r = integer_range(dt);
  const double t = std::trunc(static_cast<double>(v));
  return t < r.lo ? r.lo : t > r.hi ? r.hi : t;
}

float round_one(float v, DType dt) {
  switch (dt) {
    case DType::F32:
      return v;
    case DType::F16:
      return round_to_f16(v);
    case DType::BF16:
      return round_to_bf16(v);
    case DType::F8E4M3:
      return round_to_f8e4m3(v);
    case DType::F8E5M2:
      return round_to_f8e5m2(v);
    default:
      return static_cast<float>(to_integer(v, dt));
  }
}

/// Appends the low `size` bytes of `bits`, least significant first.
void put(std::vector<std::byte>& out, std::uint64_t bits, std::size_t size) {
  for (std::size_t b = 0; b < size; ++b) out.push_back(static_cast<std::byte>(bits >> (8 * b)));
}

std::uint64_t get(const std::vector<std::byte>& in, std::size_t at, std::size_t size) {
  std::uint64_t bits = 0;
  for (std::size_t b = 0; b < size; ++b) {
    bits |= static_cast<std::uint64_t>(in[at + b]) << (8 * b);
  }
  return bits;
}

/// The bit pattern of `v` stored as `dt` (the value already rounded for integers).
std::uint64_t float_bits(float v, DType dt) {
  switch (dt) {
    case DType::F32:
      return std::bit_cast<std::uint32_t>(v);
    case DType::F16:
      return f32_to_f16_bits(v);
    case DType::BF16:
      return f32_to_bf16_bits(v);
    case DType::F8E4M3:
      return f32_to_f8e4m3_bits(v);
    case DType::F8E5M2:
      return f32_to_f8e5m2_bits(v);
    default:
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(to_integer(v, dt)));
  }
}

/// The value of a stored element's bits, sign-extending signed integers.
float from_bits(std::uint64_t bits, DType dt) {
  switch (dt) {
    case DType::F32:
      return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case DType::F16:
      return f16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case DType::BF16:
      return bf16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case DType::F8E4M3:
      return f8e4m3_bits_to_f32(static_cast<std::uint8_t>(bits));
    case DType::F8E5M2:
      return f8e5m2_bits_to_f32(static_cast<std::uint8_t>(bits));
    case DType::I32:
      return static_cast<float>(static_cast<std::int32_t>(bits));
    case DType::I8:
      return static_cast<float>(static_cast<std::int8_t>(bits));
    case DType::Bool:
      return bits != 0 ? 1.0f : 0.0f;
    default:
      return static_cast<float>(bits);
  }
}

/// The bits of integer `v` stored as `dt`: accepted when `v` fits the dtype's width as a bit
/// pattern or, for signed dtypes, when its i32 reading is in range (u32(-3) packs as i8 -3).
std::uint64_t integer_bits(std::uint32_t v, std::size_t index, DType dt) {
  if (is_float(dt)) return float_bits(static_cast<float>(v), dt);
  const std::size_t bits = 8 * dtype_size(dt);
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  const auto as_signed = static_cast<std::int32_t>(v);
  const IntegerRange r = integer_range(dt);
  const bool fits = dt == DType::Bool   ? v <= 1
                    : is_signed_int(dt) ? v <= mask || (as_signed >= r.lo && as_signed <= r.hi)
                                        : v <= r.hi;
  if (!fits) {
    throw Error(
        fmt::format("pack_u32: value {} at index {} does not fit in {}", v, index, dtype_name(dt)));
  }
  return v & mask;
}

}  // namespace

std::vector<float> Rng::uniform(std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(engine_);
  return v;
}

std::vector<float> Rng::normal(std::size_t n, float mean, float stddev) {
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(engine_);
  return v;
}

std::vector<std::uint32_t> Rng::integers(std::size_t n, std::uint32_t lo, std::uint32_t hi) {
  if (hi <= lo) throw Error(fmt::format("Rng::integers: empty range [{}, {})", lo, hi));
  std::uniform_int_distribution<std::uint32_t> dist(lo, hi - 1);
  std::vector<std::uint32_t> v(n);
  for (std::uint32_t& x : v) x = dist(engine_);
  return v;
}

std::vector<float> round_through(const std::vector<float>& v, DType dt) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = round_one(v[i], dt);
  return out;
}

runtime::HostTensor pack(const std::vector<float>& v, DType dt) {
  runtime::HostTensor t{dt, {}};
  t.bytes.reserve(v.size() * dtype_size(dt));
  for (float x : v) put(t.bytes, float_bits(x, dt), dtype_size(dt));
  return t;
}

runtime::HostTensor pack_u32(const std::vector<std::uint32_t>& v, DType dt) {
  runtime::HostTensor t{dt, {}};
  t.bytes.reserve(v.size() * dtype_size(dt));
  for (std::size_t i = 0; i < v.size(); ++i)
    put(t.bytes, integer_bits(v[i], i, dt), dtype_size(dt));
  return t;
}

std::vector<float> unpack(const runtime::HostTensor& t) {
  const std::size_t size = dtype_size(t.dtype);
  std::vector<float> out(t.count());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = from_bits(get(t.bytes, i * size, size), t.dtype);
  return out;
}

bool holds_integer(DType dt, double value) {
  if (is_float(dt)) return false;
  const IntegerRange r = integer_range(dt);
  return std::trunc(value) == value && value >= r.lo && value <= r.hi;
}

runtime::HostTensor poisoned(DType dt, std::size_t count) {
  if (is_float(dt)) {
    return pack(std::vector<float>(count, std::numeric_limits<float>::quiet_NaN()), dt);
  }
  return {dt, std::vector<std::byte>(count * dtype_size(dt), std::byte{0xFF})};
}

}  // namespace iron::testing
