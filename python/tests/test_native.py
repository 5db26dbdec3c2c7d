"""iron_torch's native layer without torch or a GPU: the catalog, signatures, kernels run on the
simulator over host memory, and every refusal naming its argument."""

import ctypes
import struct
import unittest

from iron_torch import _native
from iron_torch._native import IronError, Tensor


def floats(values):
    return (ctypes.c_float * len(values))(*values)


def tensor(array, dtype="f32"):
    count = ctypes.sizeof(array) // _native.DTYPES[dtype][1]
    return Tensor(ctypes.addressof(array), count, dtype)


class Catalog(unittest.TestCase):
    def test_lists_the_library_with_its_forms(self):
        names = _native.kernel_names()
        self.assertIn("iron_softmax", names)
        self.assertIn("iron_gemm_nk", names)
        self.assertEqual(_native.kernel_dtypes("iron_scale"), ["f32", "f16", "bf16"])
        self.assertEqual(_native.catalog()["version"].count("."), 2)

    def test_signature_of_a_form(self):
        params = _native.signature("iron_argmax", "bf16")
        self.assertEqual([(p.name, p.kind, p.dtype) for p in params],
                         [("inp", "in", "bf16"), ("values", "out", "bf16"),
                          ("indices", "out", "u32"), ("n", "constexpr", "u32")])

    def test_unknown_names(self):
        with self.assertRaisesRegex(KeyError, "iron_nope"):
            _native.kernel_dtypes("iron_nope")
        with self.assertRaisesRegex(KeyError, "iron_nope"):
            _native.signature("iron_nope", "f32")


class OnTheSimulator(unittest.TestCase):
    def test_scale_f32(self):
        x = [0.5 * i - 3.0 for i in range(300)]
        inp, out = floats(x), floats([float("nan")] * 300)
        _native.launch("iron_scale", "f32", [tensor(inp), tensor(out), -2.0, 300], False)
        self.assertEqual(list(out), [-2.0 * v for v in x])

    def test_numbers_of_other_python_types_are_converted(self):
        # An int where a float constexpr goes is converted; u32's largest value is packed (the
        # guard then refuses the count, larger than the tensors); a bool is refused.
        x = [float(i) for i in range(64)]
        inp, out = floats(x), floats([float("nan")] * 64)
        _native.launch("iron_scale", "f32", [tensor(inp), tensor(out), 3, 64], False)
        self.assertEqual(list(out), [3.0 * v for v in x])
        with self.assertRaisesRegex(ValueError, "dispatch refused"):
            _native.launch("iron_scale", "f32", [tensor(inp), tensor(out), 1.0, 2**32 - 1], False)
        with self.assertRaisesRegex(TypeError, "argument 'n' must be a number, got a bool"):
            _native.launch("iron_scale", "f32", [tensor(inp), tensor(out), 1.0, True], False)

    def test_softmax_f16_rows(self):
        rows, n = 3, 70
        x = [((i * 7) % 23) * 0.25 - 2.0 for i in range(rows * n)]
        inp = ctypes.create_string_buffer(struct.pack(f"<{rows * n}e", *x), rows * n * 2)
        out = ctypes.create_string_buffer(rows * n * 2)
        _native.launch("iron_softmax", "f16",
                       [tensor(inp, "f16"), tensor(out, "f16"), n], False)
        got = struct.unpack(f"<{rows * n}e", out.raw)
        for r in range(rows):
            row = x[r * n:(r + 1) * n]
            top = max(row)
            weights = [2.718281828459045 ** (v - top) for v in row]
            total = sum(weights)
            for j in range(n):
                self.assertAlmostEqual(got[r * n + j], weights[j] / total, delta=2e-3)


def e4m3_value(byte):
    """The value of an e4m3 byte from its fields (bias 7; 0x7F and 0xFF are NaN)."""
    sign = -1.0 if byte & 0x80 else 1.0
    exponent, mantissa = (byte >> 3) & 0xF, byte & 7
    if byte & 0x7F == 0x7F:
        return float("nan")
    if exponent == 0:
        return sign * mantissa * 2.0 ** -9
    return sign * (1 + mantissa / 8) * 2.0 ** (exponent - 7)


class EightBitFloats(unittest.TestCase):
    def test_quantize_writes_the_nearest_e4m3_bytes(self):
        x = [((i * 37) % 101 - 50) * 0.173 for i in range(256)]
        inp = floats(x)
        q = ctypes.create_string_buffer(256)
        scales = floats([float("nan")] * 2)
        _native.launch("iron_quantize_fp8_e4m3_g128", "f32",
                       [tensor(inp), Tensor(ctypes.addressof(q), 256, "f8e4m3"),
                        tensor(scales), 2], False)
        finite = [b for b in range(256) if b & 0x7F != 0x7F]
        for group in range(2):
            block = x[group * 128:(group + 1) * 128]
            scale = struct.unpack("<f", struct.pack("<f", max(abs(v) for v in block) / 448))[0]
            self.assertAlmostEqual(scales[group], scale, places=6)
            for i, v in enumerate(block):
                got = q.raw[group * 128 + i]
                target = v / scales[group]
                best = min(abs(e4m3_value(b) - target) for b in finite)
                self.assertAlmostEqual(abs(e4m3_value(got) - target), best, places=6,
                                       msg=f"element {i} of group {group}: byte {got:#x}")


class Refusals(unittest.TestCase):
    def setUp(self):
        self.inp, self.out = floats([1.0] * 64), floats([0.0] * 64)

    def test_argument_count(self):
        with self.assertRaisesRegex(TypeError, "iron_scale: 3 arguments given, it takes 4"):
            _native.launch("iron_scale", "f32", [tensor(self.inp), tensor(self.out), 1.0], False)

    def test_a_number_where_a_tensor_goes(self):
        with self.assertRaisesRegex(TypeError, "argument 'out' must be a tensor"):
            _native.launch("iron_scale", "f32", [tensor(self.inp), 3, 1.0, 64], False)

    def test_element_type_of_a_tensor(self):
        halves = ctypes.create_string_buffer(128)
        with self.assertRaisesRegex(ValueError, "argument 'out' holds f16 elements, the kernel "
                                                "takes f32"):
            _native.launch("iron_scale", "f32",
                           [tensor(self.inp), tensor(halves, "f16"), 1.0, 64], False)

    def test_the_dispatch_guard_refuses_a_short_output(self):
        short = floats([0.0] * 10)
        with self.assertRaisesRegex(ValueError, "iron_scale: dispatch refused.*out"):
            _native.launch("iron_scale", "f32", [tensor(self.inp), tensor(short), 1.0, 64], False)

    def test_constexpr_ranges(self):
        with self.assertRaisesRegex(ValueError, "argument 'n' = -1 is outside u32"):
            _native.launch("iron_scale", "f32", [tensor(self.inp), tensor(self.out), 1.0, -1],
                           False)
        with self.assertRaisesRegex(TypeError, "argument 'n' must be an int"):
            _native.launch("iron_scale", "f32", [tensor(self.inp), tensor(self.out), 1.0, 6.5],
                           False)
        with self.assertRaisesRegex(ValueError, "argument 'alpha' must be finite"):
            _native.launch("iron_scale", "f32",
                           [tensor(self.inp), tensor(self.out), float("inf"), 64], False)

    @unittest.skipIf(_native.catalog()["cuda"]["available"], "CUDA is available here")
    def test_the_device_says_why_it_is_absent(self):
        with self.assertRaisesRegex(IronError, "iron_scale: CUDA is unavailable"):
            _native.launch("iron_scale", "f32", [tensor(self.inp), tensor(self.out), 1.0, 64],
                           True)


if __name__ == "__main__":
    unittest.main()
