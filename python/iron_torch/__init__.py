"""iron_torch: Iron's kernels on torch.Tensors, in place and zero-copy.

    import torch, iron_torch
    x = torch.randn(4, 4096, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    iron_torch.run("iron_softmax", x, out, 4096)       # on the current CUDA stream
    torch.ops.iron.iron_softmax(x, out, 4096)           # the same, as a torch.library op
                                                        # (after iron_torch.register(...) or
                                                        # iron_torch.ops.iron_softmax)

Arguments are the kernel's parameters in order (`iron list --params`, or signature()): tensors
for its tensors, numbers for its constexprs. The kernel form is the one whose element types
match the tensors (T = bf16 above). CUDA tensors run on the GPU on torch's current stream: the
call returns once the kernel is enqueued, like any torch op. CPU tensors run on Iron's simulator
(exact, checked and slow: for tests and debugging). Every launch passes Iron's dispatch guard;
a bad argument raises TypeError or ValueError naming it, and nothing runs.
"""

import functools

try:  # the tensor API needs torch; the catalog and signatures do not
    import torch as _torch_module
except ImportError:
    _torch_module = None

from ._native import FLOAT_DTYPES, IronError, Param, catalog, kernel_dtypes, kernel_names
from ._native import signature
from ._native import Tensor as _Raw
from ._native import launch as _launch

__all__ = ["IronError", "Param", "cuda_available", "kernels", "dtypes", "signature", "run",
           "register", "ops"]

_TORCH_DTYPE_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32",
                      "uint32": "u32", "uint8": "u8", "int8": "i8", "uint16": "u16",
                      "bool": "bool", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}


def kernels():
    """The names of every Iron kernel this module can run."""
    return kernel_names()


def dtypes(kernel):
    """The element types T that `kernel` has forms for ("f32", "f16", "bf16", …)."""
    return kernel_dtypes(kernel)


def cuda_available():
    """Whether Iron can launch on a GPU here; catalog()["cuda"]["reason"] says why not."""
    return catalog()["cuda"]["available"]


def _torch():
    if _torch_module is None:
        raise ImportError("iron_torch: running kernels on tensors needs PyTorch")
    return _torch_module


def _current_stream(torch, index):
    """The CUstream torch runs on now on CUDA device `index` (its raw handle, without making a
    Stream object when torch offers that)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(index)
    return torch.cuda.current_stream(index).cuda_stream


@functools.cache
def _iron_dtypes():
    """torch.dtype -> Iron's dtype name, for the types both have."""
    torch = _torch()
    return {getattr(torch, name): iron for name, iron in _TORCH_DTYPE_NAMES.items()
            if hasattr(torch, name)}


def _iron_dtype(kernel, name, tensor):
    dtype = _iron_dtypes().get(tensor.dtype)
    if dtype is None:
        raise ValueError(f"{kernel}: argument '{name}' is {tensor.dtype}, which no Iron kernel "
                         f"takes")
    return dtype


@functools.cache
def _params(kernel):
    """The kernel's parameters (names and kinds are the same in every form)."""
    return signature(kernel, kernel_dtypes(kernel)[0])


def _bind(kernel, args, kwargs):
    """The arguments in parameter order, from positions then names."""
    params = _params(kernel)
    if not kwargs and len(args) == len(params):
        return params, args
    if len(args) > len(params):
        raise TypeError(f"{kernel}: {len(args)} arguments given, it takes {len(params)} "
                        f"({', '.join(p.name for p in params)})")
    bound = list(args) + [None] * (len(params) - len(args))
    for name, value in kwargs.items():
        where = next((i for i, p in enumerate(params) if p.name == name), None)
        if where is None:
            raise TypeError(f"{kernel}: no parameter named '{name}'")
        if where < len(args):
            raise TypeError(f"{kernel}: argument '{name}' given twice")
        bound[where] = value
    missing = [p.name for p, v in zip(params, bound) if v is None]
    if missing:
        raise TypeError(f"{kernel}: missing argument(s) {', '.join(missing)}")
    return params, bound


@functools.cache
def _form_for(kernel, tensor_dtypes):
    """The dtype T of the form whose tensor element types are `tensor_dtypes` (the tensors' own,
    in parameter order); ValueError naming the first argument that no form takes."""
    params = _params(kernel)
    given = dict(zip((p.name for p in params if p.is_tensor), tensor_dtypes))
    candidates = kernel_dtypes(kernel)
    for dtype in candidates:
        if all(given[p.name] == p.dtype for p in signature(kernel, dtype) if p.is_tensor):
            return dtype
    # None matches: name the first argument that differs in the form of the first tensor's type.
    first = next(iter(given.values()), candidates[0])
    closest = first if first in candidates else candidates[0]
    for p in signature(kernel, closest):
        if p.is_tensor and given[p.name] != p.dtype:
            raise ValueError(f"{kernel}: argument '{p.name}' is {given[p.name]}; the {closest} "
                             f"form takes {p.dtype} there (forms: {', '.join(candidates)})")
    raise ValueError(f"{kernel}: no form matches the tensors' element types")


@functools.cache
def _tensor_flags(kernel):
    """Whether each parameter of the kernel is a tensor, in order."""
    return tuple(p.is_tensor for p in _params(kernel))


def run(kernel, *args, **kwargs):
    """Runs Iron kernel `kernel` on torch tensors and numbers, in parameter order (or by name).
    The kernel writes its output tensors in place; nothing is returned. CUDA tensors: enqueued on
    torch's current stream of their device. CPU tensors: run on the simulator before returning.
    TypeError/ValueError name a bad argument (nothing runs then); IronError is any other
    failure."""
    torch = _torch()
    params, bound = _bind(kernel, args, kwargs)
    names = _iron_dtypes()
    where = None  # the first tensor's device: its CUDA index, or -1 for the CPU
    raw = []
    tensor_dtypes = []
    for p, is_tensor, value in zip(params, _tensor_flags(kernel), bound):
        if not is_tensor:
            raw.append(value)
            continue
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{kernel}: argument '{p.name}' must be a torch.Tensor, got "
                            f"{type(value).__name__}")
        if value.is_cuda:
            here = value.get_device()
        elif value.is_cpu:
            here = -1
        else:
            raise ValueError(f"{kernel}: argument '{p.name}' is on {value.device}; Iron runs "
                             f"CUDA tensors on the GPU and CPU tensors on its simulator")
        if where is None:
            where, first = here, value
        elif here != where:
            raise ValueError(f"{kernel}: argument '{p.name}' is on {value.device}, the first "
                             f"tensor on {first.device}")
        if not value.is_contiguous():
            raise ValueError(f"{kernel}: argument '{p.name}' is not contiguous (strides "
                             f"{tuple(value.stride())}); pass .contiguous()")
        dtype = names.get(value.dtype)
        if dtype is None:
            dtype = _iron_dtype(kernel, p.name, value)  # raises, naming the argument
        tensor_dtypes.append(dtype)
        raw.append(_Raw(value.data_ptr(), value.numel(), dtype))
    if where is not None and where > 0:
        raise ValueError(f"{kernel}: the tensors are on {first.device}; Iron launches on cuda:0")
    form = _form_for(kernel, tuple(tensor_dtypes))
    on_device = where is not None and where >= 0
    stream = _current_stream(torch, where) if on_device else 0
    _launch(kernel, form, raw, on_device, stream)


_ops = {}       # kernel name -> its torch.ops.iron op
_library = []  # the torch.library.Library fragment of namespace "iron", once made


def _schema(kernel):
    """The torch.library schema: tensors (written ones mutable, each its own alias set),
    constexprs as float/int/bool, nothing returned."""
    parts = []
    aliases = iter("abcdefghijklmnopqrstuvwxyz")
    for p in _params(kernel):
        if p.is_tensor:
            parts.append(f"Tensor({next(aliases)}!) {p.name}" if p.is_written else
                         f"Tensor {p.name}")
        elif p.dtype in FLOAT_DTYPES:
            parts.append(f"float {p.name}")
        else:
            parts.append(f"{'bool' if p.dtype == 'bool' else 'int'} {p.name}")
    return f"({', '.join(parts)}) -> ()"


def register(kernel):
    """Registers `kernel` as the custom op torch.ops.iron.<kernel> (CUDA and CPU, and a fake
    kernel so that torch.compile graphs can call it) and returns it; once per kernel."""
    if kernel in _ops:
        return _ops[kernel]
    torch = _torch()
    kernel_dtypes(kernel)  # KeyError naming an unknown kernel
    if not _library:
        _library.append(torch.library.Library("iron", "FRAGMENT"))
    library = _library[0]
    library.define(kernel + _schema(kernel))

    def implementation(*args):
        run(kernel, *args)

    library.impl(kernel, implementation, "CUDA")
    library.impl(kernel, implementation, "CPU")
    torch.library.register_fake(f"iron::{kernel}", lambda *args: None, lib=library)
    _ops[kernel] = getattr(torch.ops.iron, kernel)
    return _ops[kernel]


class _Ops:
    """iron_torch.ops.<kernel>: the kernel's torch.library op, registered on first use."""

    def __getattr__(self, kernel):
        try:
            return register(kernel)
        except KeyError as error:
            raise AttributeError(str(error)) from error

    def __dir__(self):
        return kernels()


ops = _Ops()
