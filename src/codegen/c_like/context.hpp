/// What building one expression needs: kernel, value names, dialect and the needs record.
#pragma once

#include "dialect.hpp"
#include "values.hpp"

namespace iron::codegen::c_like {

struct Context {
  const ir::Kernel& kernel;
  const Values& values;
  const Dialect& dialect;
  Needs& needs;
};

}  // namespace iron::codegen::c_like
