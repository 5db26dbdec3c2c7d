/// The AOT bundle header: a driver-API loader and a typed launch function per kernel form.
#include "iron/codegen/aot_bundle.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "aot_rules.hpp"
#include "c_like/kernel_abi.hpp"
#include "iron/codegen/emit.hpp"
#include "iron/core/error.hpp"
#include "iron/core/size_expr.hpp"

namespace iron::codegen {
namespace {

constexpr std::string_view kPreamble = R"header(#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace iron_aot {

using DevicePtr = unsigned long long;  ///< a device address (CUdeviceptr)
using Stream = void*;                  ///< a CUstream; nullptr is the default stream

struct Dim3 {
  unsigned int x = 1, y = 1, z = 1;
};

/// What failed: the function or step, and the driver's message when the driver said it.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

using Result = int;
using Function = void*;

/// The driver functions the bundle calls, looked up in libcuda at run time.
struct Driver {
  void* library = nullptr;
  Result (*init)(unsigned int) = nullptr;
  Result (*device_get)(int*, int) = nullptr;
  Result (*device_attribute)(int*, int, int) = nullptr;
  Result (*primary_ctx_retain)(void**, int) = nullptr;
  Result (*ctx_set_current)(void*) = nullptr;
  Result (*ctx_synchronize)() = nullptr;
  Result (*module_load_data)(void**, const void*) = nullptr;
  Result (*module_get_function)(Function*, void*, const char*) = nullptr;
  Result (*func_set_attribute)(Function, int, int) = nullptr;
  Result (*launch_kernel)(Function, unsigned int, unsigned int, unsigned int, unsigned int,
                          unsigned int, unsigned int, unsigned int, Stream, void**,
                          void**) = nullptr;
  Result (*mem_alloc)(DevicePtr*, std::size_t) = nullptr;
  Result (*mem_free)(DevicePtr) = nullptr;
  Result (*memcpy_htod)(DevicePtr, const void*, std::size_t) = nullptr;
  Result (*memcpy_dtoh)(void*, DevicePtr, std::size_t) = nullptr;
  Result (*error_string)(Result, const char**) = nullptr;
};

template <class F>
void find(void* library, const char* symbol, F& function) {
  function = reinterpret_cast<F>(dlsym(library, symbol));
  if (function == nullptr) throw Error(std::string("the CUDA driver has no ") + symbol);
}

/// One cubin of a form: architecture (sm × 10), file, dynamic shared bytes, and whether it was
/// built for sm_NNa (it runs on that compute capability only, and is preferred there).
struct Binary {
  int sm;
  const char* file;
  unsigned int dynamic_shared;
  bool arch_specific = false;
};

/// A kernel form: its symbol, cubins, and the literal rules on its threads per group (0: none).
struct Form {
  const char* symbol;
  std::vector<Binary> binaries;
  unsigned int exactly, at_most, multiple_of;
};
)header";

/// The rest of the preamble, after the launch rules' helpers (aot_rules.hpp).
constexpr std::string_view kPreambleTail = R"header(
}  // namespace detail

/// The bundle's folder opened on one CUDA device: the driver, the device's primary context
/// (made current on the calling thread), and the modules loaded so far.
class Bundle {
 public:
  explicit Bundle(std::string folder, int device = 0) : folder_(std::move(folder)) {
    d_.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (d_.library == nullptr) throw Error("no CUDA driver here (libcuda.so.1 did not load)");
    detail::find(d_.library, "cuInit", d_.init);
    detail::find(d_.library, "cuDeviceGet", d_.device_get);
    detail::find(d_.library, "cuDeviceGetAttribute", d_.device_attribute);
    detail::find(d_.library, "cuDevicePrimaryCtxRetain", d_.primary_ctx_retain);
    detail::find(d_.library, "cuCtxSetCurrent", d_.ctx_set_current);
    detail::find(d_.library, "cuCtxSynchronize", d_.ctx_synchronize);
    detail::find(d_.library, "cuModuleLoadData", d_.module_load_data);
    detail::find(d_.library, "cuModuleGetFunction", d_.module_get_function);
    detail::find(d_.library, "cuFuncSetAttribute", d_.func_set_attribute);
    detail::find(d_.library, "cuLaunchKernel", d_.launch_kernel);
    detail::find(d_.library, "cuMemAlloc_v2", d_.mem_alloc);
    detail::find(d_.library, "cuMemFree_v2", d_.mem_free);
    detail::find(d_.library, "cuMemcpyHtoD_v2", d_.memcpy_htod);
    detail::find(d_.library, "cuMemcpyDtoH_v2", d_.memcpy_dtoh);
    detail::find(d_.library, "cuGetErrorString", d_.error_string);
    check(d_.init(0), "cuInit");
    int handle = 0;
    check(d_.device_get(&handle, device), "cuDeviceGet");
    int major = 0, minor = 0;
    check(d_.device_attribute(&major, 75, handle), "cuDeviceGetAttribute");
    check(d_.device_attribute(&minor, 76, handle), "cuDeviceGetAttribute");
    sm_ = major * 10 + minor;
    check(d_.primary_ctx_retain(&context_, handle), "cuDevicePrimaryCtxRetain");
    check(d_.ctx_set_current(context_), "cuCtxSetCurrent");
  }
  Bundle(const Bundle&) = delete;
  Bundle& operator=(const Bundle&) = delete;

  /// The device's architecture, sm × 10 (90 for an H100 or H200).
  int sm() const { return sm_; }

  DevicePtr alloc(std::size_t bytes) {
    DevicePtr p = 0;
    check(d_.mem_alloc(&p, bytes), "cuMemAlloc");
    return p;
  }
  void free(DevicePtr p) { check(d_.mem_free(p), "cuMemFree"); }
  void upload(DevicePtr to, const void* from, std::size_t bytes) {
    check(d_.memcpy_htod(to, from, bytes), "cuMemcpyHtoD");
  }
  void download(void* to, DevicePtr from, std::size_t bytes) {
    check(d_.memcpy_dtoh(to, from, bytes), "cuMemcpyDtoH");
  }
  /// Waits for every launch; throws naming the failure of one that faulted.
  void synchronize() { check(d_.ctx_synchronize(), "cuCtxSynchronize"); }

  /// Launches `form` after checking its threads per group; `args` point at each parameter.
  void launch(const detail::Form& form, Stream stream, Dim3 groups, Dim3 threads, void** args) {
    const unsigned long long per_group =
        static_cast<unsigned long long>(threads.x) * threads.y * threads.z;
    if ((form.exactly != 0 && per_group != form.exactly) ||
        (form.at_most != 0 && per_group > form.at_most) ||
        (form.multiple_of != 0 && per_group % form.multiple_of != 0)) {
      throw Error(std::string(form.symbol) + ": " + std::to_string(per_group) +
                  " threads per group break the kernel's rule (exactly " +
                  std::to_string(form.exactly) + ", at most " + std::to_string(form.at_most) +
                  ", a multiple of " + std::to_string(form.multiple_of) + "; 0: none)");
    }
    if (groups.x == 0 || groups.y == 0 || groups.z == 0) {
      throw Error(std::string(form.symbol) + ": a grid with no groups");
    }
    const Loaded& k = loaded(form);
    check(d_.launch_kernel(k.function, groups.x, groups.y, groups.z, threads.x, threads.y,
                           threads.z, k.dynamic_shared, stream, args, nullptr),
          std::string("cuLaunchKernel of ") + form.symbol);
  }

 private:
  struct Loaded {
    detail::Function function;
    unsigned int dynamic_shared;
  };

  void check(detail::Result r, const std::string& what) const {
    if (r == 0) return;
    const char* text = nullptr;
    if (d_.error_string != nullptr) d_.error_string(r, &text);
    throw Error(what + " failed: " + (text != nullptr ? text : "error " + std::to_string(r)));
  }

  /// The form's function for this device, its module loaded on first use: the cubin built for
  /// exactly its architecture's own features (sm_90a on a 9.0 device) if the bundle has one, else
  /// the cubin of the newest architecture of the device's major version not past its minor.
  const Loaded& loaded(const detail::Form& form) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = functions_.find(form.symbol); it != functions_.end()) return it->second;
    const detail::Binary* best = nullptr;
    for (const detail::Binary& b : form.binaries) {
      if (b.arch_specific && b.sm == sm_) best = &b;
    }
    for (const detail::Binary& b : form.binaries) {
      if (best != nullptr && best->arch_specific) break;
      if (b.arch_specific) continue;
      if (b.sm / 10 == sm_ / 10 && b.sm <= sm_ && (best == nullptr || b.sm > best->sm)) best = &b;
    }
    if (best == nullptr) {
      throw Error(std::string(form.symbol) + ": the bundle has no cubin for sm_" +
                  std::to_string(sm_));
    }
    const std::string path = folder_ + "/" + best->file;
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> image{std::istreambuf_iterator<char>(in),
                                  std::istreambuf_iterator<char>()};
    if (!in.good() && !in.eof()) throw Error("cannot read " + path);
    if (image.empty()) throw Error("cannot read " + path + " (missing or empty)");
    void* module = nullptr;
    check(d_.module_load_data(&module, image.data()), "cuModuleLoadData of " + path);
    Loaded k{nullptr, best->dynamic_shared};
    check(d_.module_get_function(&k.function, module, form.symbol),
          std::string("cuModuleGetFunction of ") + form.symbol);
    if (k.dynamic_shared > 48u * 1024u) {
      check(d_.func_set_attribute(k.function, 8, static_cast<int>(k.dynamic_shared)),
            std::string("cuFuncSetAttribute of ") + form.symbol);
    }
    return functions_.emplace(form.symbol, k).first->second;
  }

  std::string folder_;
  detail::Driver d_;
  int sm_ = 0;
  void* context_ = nullptr;
  std::mutex mutex_;
  std::map<std::string, Loaded> functions_;
};

/// A constexpr's 4-byte carrier (the launch ABI, docs/compiler.md).
inline float carrier(float v) { return v; }
inline int carrier(std::int32_t v) { return v; }
inline int carrier(std::int8_t v) { return v; }
inline unsigned int carrier(std::uint32_t v) { return v; }
inline unsigned int carrier(std::uint8_t v) { return v; }
inline unsigned int carrier(std::uint16_t v) { return v; }
inline unsigned int carrier(bool v) { return v ? 1u : 0u; }
)header";

/// The literal `exactly`, `at_most` and `multiple_of` rules of the group size (0 for none).
std::string rules(const ir::Kernel& kernel) {
  std::int64_t exactly = 0;
  std::int64_t at_most = 0;
  std::int64_t multiple = 0;
  for (const ir::SizeRule& r : kernel.dispatch.group_size_rules) {
    if (!r.constexpr_name.empty()) continue;
    if (r.kind == ir::SizeRule::Kind::Exactly) exactly = r.value;
    if (r.kind == ir::SizeRule::Kind::AtMost) {
      at_most = at_most == 0 ? r.value : std::min(at_most, r.value);
    }
    if (r.kind == ir::SizeRule::Kind::MultipleOf) multiple = r.value;
  }
  return fmt::format("{}u, {}u, {}u", exactly, at_most, multiple);
}

/// The contract's launch rules as the kernel declared them, for the function's comment.
std::string launch_rules(const ir::Kernel& kernel) {
  constexpr std::string_view kAxes = "xyz";
  std::vector<std::string> rules;
  for (const ir::GridRule& r : kernel.dispatch.grid_rules) {
    rules.push_back(fmt::format("groups.{} {} {}", kAxes[r.axis], ir::relation_name(r.relation),
                                ir::print_size_expr(r.bound)));
  }
  for (const ir::SizeRule& r : kernel.dispatch.group_size_rules) {
    const std::string bound = r.constexpr_name.empty()
                                  ? std::to_string(r.value)
                                  : fmt::format("{} / {}", r.constexpr_name, r.divisor);
    rules.push_back(fmt::format("threads {} {}", ir::size_rule_name(r.kind), bound));
  }
  return rules.empty() ? "any grid" : fmt::format("{}", fmt::join(rules, "; "));
}

std::string launcher(const AotForm& form) {
  const ir::Kernel& kernel = form.kernel;
  const std::string symbol = kernel_symbol(kernel);
  std::vector<std::string> params = {"Bundle& bundle", "Stream stream", "Dim3 groups",
                                     "Dim3 threads"};
  std::vector<std::string> doc;
  std::string carriers;
  std::vector<std::string> args;
  for (std::size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Param& p = kernel.params[i];
    if (p.kind == ir::ParamKind::Constexpr) {
      params.push_back(fmt::format("{} {}", c_like::host_type(p.dtype), p.name));
      carriers += fmt::format("  auto carried{} = carrier({});\n", i, p.name);
      args.push_back(fmt::format("&carried{}", i));
      doc.push_back(fmt::format("{} {}", p.name, dtype_name(p.dtype)));
    } else {
      params.push_back("DevicePtr " + p.name);
      args.push_back("&" + p.name);
      doc.push_back(fmt::format("{} {} {}[]", p.name, p.kind == ir::ParamKind::Input ? "in" : "out",
                                dtype_name(p.dtype)));
    }
  }
  std::vector<std::string> binaries;
  for (const AotBinary& b : form.binaries) {
    binaries.push_back(fmt::format("{{{}, \"{}\", {}u{}}}", b.sm, b.file, b.dynamic_shared_bytes,
                                   b.arch_specific ? ", true" : ""));
  }
  return fmt::format(
      "\n/// {} ({}) with T = {}: {}.\n/// Launch: {} (tpg: threads per group).\ninline void {}(\n "
      "   {}) {{\n"
      "  static const detail::Form form{{\"{}\", {{{}}}, {}}};\n{}"
      "  void* args[] = {{{}}};\n"
      "  bundle.launch(form, stream, groups, threads, args);\n}}\n",
      kernel.name, format_loc(kernel.loc), dtype_name(kernel.dtype), fmt::join(doc, ", "),
      launch_rules(kernel), symbol, fmt::join(params, ",\n    "), symbol, fmt::join(binaries, ", "),
      rules(kernel), aot::check_call(kernel) + carriers, fmt::join(args, ", "));
}

}  // namespace

std::string emit_aot_header(const std::vector<AotForm>& forms) {
  std::string text =
      "// An Iron ahead-of-time bundle: one launch function per kernel form, over the cubins in\n"
      "// this folder. Generated by Iron \u2014 do not edit. Needs a CUDA driver at run time, and\n"
      "// nothing of the CUDA toolkit or of Iron to build.\n";
  text += kPreamble;
  text += aot::rules_preamble();
  text += kPreambleTail;
  std::set<std::string> symbols;
  for (const AotForm& f : forms) {
    c_like::check_names(
        f.kernel, "the AOT bundle header",
        "bundle stream groups threads form args carrier detail iron_aot std rules per_group");
    IRON_INTERNAL_ASSERT(symbols.insert(kernel_symbol(f.kernel)).second,
                         "the AOT header asked twice for " + kernel_symbol(f.kernel));
    text += aot::check_function(f.kernel) + launcher(f);
  }
  return text + "\n}  // namespace iron_aot\n";
}

}  // namespace iron::codegen
