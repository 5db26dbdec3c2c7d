/// Writing the files a command produces: parent folders created, the file replaced whole.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace iron::cli {

/// Writes `size` bytes at `data` to `path`; iron::Error naming the file when it cannot.
void write_file(const std::filesystem::path& path, const void* data, std::size_t size);
void write_text(const std::filesystem::path& path, const std::string& text);

}  // namespace iron::cli
