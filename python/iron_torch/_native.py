"""Iron's native library through ctypes: the kernel catalog, the signature of each kernel form,
and launches on raw addresses (device memory on a CUDA stream, or host memory through the
simulator). Needs neither torch nor a GPU; iron_torch builds its tensor API on it."""

import ctypes
import functools
import json
import math
import os
import pathlib
import struct
from dataclasses import dataclass
from typing import NamedTuple

LIBRARY_NAME = "libiron_python.so"

# Iron's element types: name -> (code, bytes), the codes of iron::DType.
DTYPES = {"f32": (0, 4), "f16": (1, 2), "bf16": (2, 2), "i32": (3, 4), "u32": (4, 4),
          "u8": (5, 1), "i8": (6, 1), "u16": (7, 2), "bool": (8, 1), "f8e4m3": (9, 1),
          "f8e5m2": (10, 1)}
FLOAT_DTYPES = ("f32", "f16", "bf16", "f8e4m3", "f8e5m2")
INTEGER_RANGES = {"i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1), "u8": (0, 255),
                  "i8": (-128, 127), "u16": (0, 2**16 - 1), "bool": (0, 1)}


class IronError(RuntimeError):
    """A kernel failed to compile, launch or run (the message says which and why)."""


# One argument as iron_py_launch reads it (struct IronPyArg): is_tensor, dtype code, address,
# count, number, integer; an array of them is packed with struct, much faster than ctypes'
# Structure array for the launch path.
_ARG_FORMAT = "IIQQdq"


def library_path():
    """$IRON_PYTHON_LIBRARY, else the library next to this file."""
    return os.environ.get("IRON_PYTHON_LIBRARY") or str(
        pathlib.Path(__file__).with_name(LIBRARY_NAME))


@functools.cache
def library():
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as error:
        raise ImportError(f"iron_torch: cannot load its native library {path}: {error}") from error
    lib.iron_py_catalog.restype = ctypes.c_char_p
    lib.iron_py_catalog.argtypes = []
    lib.iron_py_signature.restype = ctypes.c_char_p
    lib.iron_py_signature.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    lib.iron_py_launch.restype = ctypes.c_int
    lib.iron_py_launch.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                   ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p,
                                   ctypes.POINTER(ctypes.c_char_p)]
    return lib


@functools.cache
def catalog():
    """{"version", "cuda": {"available", "reason"}, "kernels": [{"name", "dtypes"}]}."""
    return json.loads(library().iron_py_catalog().decode())


def kernel_names():
    return [k["name"] for k in catalog()["kernels"]]


def kernel_dtypes(kernel):
    """The dtypes T of `kernel`'s forms; KeyError naming the kernel when there is none."""
    for k in catalog()["kernels"]:
        if k["name"] == kernel:
            return list(k["dtypes"])
    raise KeyError(f"no Iron kernel named '{kernel}' (iron_torch.kernels() lists them)")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str   # "in", "out", "inout" or "constexpr"
    dtype: str  # an Iron dtype name

    @property
    def is_tensor(self):
        return self.kind != "constexpr"

    @property
    def is_written(self):
        return self.kind in ("out", "inout")


@functools.cache
def signature(kernel, dtype):
    """The parameters of `kernel` with T bound to `dtype`, in order."""
    text = library().iron_py_signature(kernel.encode(), dtype.encode()).decode()
    parsed = json.loads(text)
    if isinstance(parsed, dict):
        raise KeyError(parsed["error"])
    return tuple(Param(p["name"], p["kind"], p["dtype"]) for p in parsed)


class Tensor(NamedTuple):
    """A tensor argument: `count` elements of `dtype` at `address` (a tuple: cheap to make at
    every launch)."""
    address: int
    count: int
    dtype: str


def number_argument(kernel, param, value):
    """`value` as a constexpr of `param`'s dtype; TypeError/ValueError naming the argument."""
    if isinstance(value, bool) and param.dtype != "bool":
        raise TypeError(f"{kernel}: argument '{param.name}' must be a number, got a bool")
    if param.dtype in FLOAT_DTYPES:
        if not isinstance(value, (int, float)):
            raise TypeError(f"{kernel}: argument '{param.name}' must be a float, "
                            f"got {type(value).__name__}")
        if not math.isfinite(value):
            raise ValueError(f"{kernel}: argument '{param.name}' must be finite, got {value}")
        return float(value)
    if not isinstance(value, int):
        raise TypeError(f"{kernel}: argument '{param.name}' must be an int ({param.dtype}), "
                        f"got {type(value).__name__}")
    low, high = INTEGER_RANGES[param.dtype]
    if not low <= value <= high:
        raise ValueError(f"{kernel}: argument '{param.name}' = {value} is outside "
                         f"{param.dtype}'s range [{low}, {high}]")
    return int(value)


_TENSOR, _FLOAT, _INTEGER = 0, 1, 2


@functools.cache
def _plan(kernel, dtype):
    """The form's parameters as launch packs them: (param, kind, dtype code, integer range),
    the struct that packs their arguments, and the kernel's and dtype's names as bytes."""
    rows = []
    for p in signature(kernel, dtype):
        kind = _TENSOR if p.is_tensor else _FLOAT if p.dtype in FLOAT_DTYPES else _INTEGER
        rows.append((p, kind, DTYPES[p.dtype][0], INTEGER_RANGES.get(p.dtype)))
    packer = struct.Struct("=" + _ARG_FORMAT * len(rows))
    return tuple(rows), packer, kernel.encode(), dtype.encode()


def launch(kernel, dtype, arguments, on_device, stream=0):
    """Runs the form (kernel, dtype) with `arguments` in parameter order, each a Tensor or a
    number. On the device (`on_device`): tensors are device addresses, launched on the CUstream
    `stream` (0: the legacy default stream), returning before the kernel ends. Else on the
    simulator: tensors are host addresses, written when this returns. ValueError when refused
    (nothing ran), IronError when it failed."""
    plan, packer, kernel_name, dtype_name = _plan(kernel, dtype)
    if len(arguments) != len(plan):
        names = ", ".join(row[0].name for row in plan)
        raise TypeError(f"{kernel}: {len(arguments)} arguments given, it takes {len(plan)} "
                        f"({names})")
    slots = []
    for (param, kind, code, limits), value in zip(plan, arguments):
        if kind == _TENSOR:
            if not isinstance(value, Tensor):
                raise TypeError(f"{kernel}: argument '{param.name}' must be a tensor, "
                                f"got {type(value).__name__}")
            slots += (1, DTYPES[value.dtype][0], value.address, value.count, 0.0, 0)
        elif kind == _FLOAT:
            if type(value) is not float or not math.isfinite(value):
                value = number_argument(kernel, param, value)
            slots += (0, code, 0, 0, value, 0)
        else:
            if type(value) is not int or not limits[0] <= value <= limits[1]:
                value = number_argument(kernel, param, value)
            slots += (0, code, 0, 0, 0.0, value)
    error = ctypes.c_char_p()
    outcome = library().iron_py_launch(kernel_name, dtype_name, packer.pack(*slots), len(plan),
                                       1 if on_device else 0, ctypes.c_void_p(stream or None),
                                       ctypes.byref(error))
    if outcome == 1:
        raise ValueError(error.value.decode())
    if outcome != 0:
        raise IronError(error.value.decode())
