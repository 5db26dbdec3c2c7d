/// The wmma strategy's spellings of the fragment ops (docs/tensor-cores.md): which kernels and
/// fragments it holds as nvcuda::wmma tiles, the statements and expressions it writes for them,
/// and the lines that open the body of a kernel it lowers.
#pragma once

#include <string>
#include <vector>

#include "../c_like/dialect.hpp"

namespace iron::codegen::cuda {

/// Whether wmma can lower every fragment op of `kernel`: its A and B fragments hold f16 or bf16
/// and are whole 16×16 tiles (so a B of N % 16 == 8 does not fit), and frag.get, frag.set and
/// frag.coord touch accumulators only. A kernel that does not fit is lowered the software way.
bool wmma_fits(const ir::Kernel& kernel);

/// Whether a fragment of `shape`, in a kernel that fits, is held as wmma tiles: A and B always,
/// accumulators of whole 16×16 tiles. The others (the M×8 row vectors) keep mma.m16n8k16's lane
/// map and the software lowering.
bool wmma_holds(const ir::FragmentShape& shape);

/// The helpers the body needs whatever op asks for them: frag.rowvalue's, which the dialect's
/// interface gives no Needs to.
void wmma_kernel_needs(const ir::Kernel& kernel, c_like::Needs& needs);

/// Whether `needs` lists a wmma helper (so the file includes <mma.h>).
bool uses_wmma(const c_like::Needs& needs);

/// The lines that open the body of a kernel lowered by wmma: the warp's scratch tile in shared
/// memory and the accumulator slots' positions, when `needs` lists helpers that use them; empty
/// otherwise.
std::string wmma_prologue(const ir::Kernel& kernel, const c_like::Needs& needs);

/// Whether `kernel` loads its B fragments row-major only (as from a [K, N] weight): their wmma
/// tiles are row_major then, so those loads can be load_matrix_sync; column_major otherwise.
bool wmma_row_major_b(const ir::Kernel& kernel);

/// The declaration of held fragment `name` of `shape`, `type` its element type's spelling; B
/// tiles row_major when `row_major_b`.
std::vector<std::string> wmma_declaration(const std::string& name, const ir::FragmentShape& shape,
                                          const std::string& type, const std::string& init,
                                          bool row_major_b, c_like::Needs& needs);
std::string wmma_access(const c_like::FragmentAccess& f, c_like::Needs& needs);
std::string wmma_product(const c_like::FragmentProduct& p, c_like::Needs& needs);
/// Slot `slot` of held accumulator `name`: element slot % 8 of its tile slot / 8.
std::string wmma_element(const std::string& name, std::uint32_t slot);
std::string wmma_coord(const ir::FragmentShape& shape, std::uint32_t slot, bool column,
                       c_like::Needs& needs);
std::string wmma_row_value(const std::string& rows, const ir::FragmentShape& shape,
                           std::uint32_t slot);
std::string wmma_row_reduce(const std::string& rows, const std::string& source,
                            ir::RowReduction reduction, c_like::Needs& needs);
std::string wmma_convert(const std::string& a, const std::string& source, c_like::Needs& needs);

}  // namespace iron::codegen::cuda
