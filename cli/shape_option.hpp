/// `--shape NAME=VALUE,…`: a launch's constexpr values as `iron tune` and `iron warmup` take them.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace iron::cli {

/// "m=4096,n=4096,alpha=1" as constexpr values; UsageError naming the option otherwise.
std::map<std::string, double, std::less<>> parse_shape(const std::string& text);

}  // namespace iron::cli
