/// write_file and write_text for `iron build` and its AOT bundles.
#include "output_files.hpp"

#include <fmt/format.h>

#include <fstream>

#include "iron/core/error.hpp"

namespace iron::cli {

void write_file(const std::filesystem::path& path, const void* data, std::size_t size) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw Error(fmt::format("cannot write {}", path.string()));
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  write_file(path, text.data(), text.size());
}

}  // namespace iron::cli
