/// The one header a kernel file includes: the DSL, its control flow and intrinsics.
#pragma once

#include "iron/dsl/control.hpp"
#include "iron/dsl/expr.hpp"
#include "iron/dsl/intrinsics.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/dsl/memory.hpp"
#include "iron/dsl/types.hpp"
