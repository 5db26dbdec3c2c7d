/// The one header a kernel file includes: the DSL, its control flow, intrinsics, register arrays,
/// tensor-core fragments and launch geometry.
#pragma once

#include "iron/dsl/control.hpp"
#include "iron/dsl/expr.hpp"
#include "iron/dsl/fragments.hpp"
#include "iron/dsl/geometry.hpp"
#include "iron/dsl/intrinsics.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/dsl/memory.hpp"
#include "iron/dsl/pipeline.hpp"
#include "iron/dsl/registers.hpp"
#include "iron/dsl/target_query.hpp"
#include "iron/dsl/tile_copy.hpp"
#include "iron/dsl/tuning.hpp"
#include "iron/dsl/types.hpp"
#include "iron/dsl/warpgroup.hpp"
