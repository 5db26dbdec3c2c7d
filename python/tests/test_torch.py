"""iron_torch on torch.Tensors: the GPU (in place, on the current stream, inside a captured CUDA
graph and a torch.compile graph), the simulator for CPU tensors, and refusals naming the
argument. Skipped without torch; the GPU cases skipped without CUDA."""

import unittest

try:
    import torch
except ImportError:
    torch = None

import iron_torch

HAS_CUDA = torch is not None and torch.cuda.is_available() and iron_torch.cuda_available()


def softmax_reference(x):
    return torch.softmax(x.double(), dim=-1)


@unittest.skipIf(torch is None, "no torch")
class CpuTensors(unittest.TestCase):
    def test_scale_runs_on_the_simulator(self):
        x = torch.linspace(-4, 4, 257, dtype=torch.float32)
        out = torch.full_like(x, float("nan"))
        iron_torch.run("iron_scale", x, out, 0.5, x.numel())
        torch.testing.assert_close(out, x * 0.5, rtol=0, atol=0)

    def test_refusals_name_the_argument(self):
        x = torch.ones(4, 64)
        with self.assertRaisesRegex(ValueError, "argument 'inp' is not contiguous"):
            iron_torch.run("iron_softmax", x.t(), torch.empty(64, 4), 4)
        with self.assertRaisesRegex(TypeError, "argument 'out' must be a torch.Tensor"):
            iron_torch.run("iron_softmax", x, [0.0], 64)
        with self.assertRaisesRegex(ValueError, "argument 'out' is f16; the f32 form takes f32"):
            iron_torch.run("iron_softmax", x, torch.empty(4, 64, dtype=torch.float16), 64)
        with self.assertRaisesRegex(TypeError, "missing argument\\(s\\) n"):
            iron_torch.run("iron_softmax", x, torch.empty_like(x))
        with self.assertRaisesRegex(ValueError, "dispatch refused"):
            iron_torch.run("iron_softmax", x, torch.empty(2, 64), 64)


@unittest.skipUnless(HAS_CUDA, "no CUDA")
class CudaTensors(unittest.TestCase):
    def test_softmax_each_dtype(self):
        for dtype, tolerance in ((torch.float32, 1e-6), (torch.float16, 2e-3),
                                 (torch.bfloat16, 1e-2)):
            x = (torch.randn(33, 4096, device="cuda") * 3).to(dtype)
            out = torch.full_like(x, float("nan"))
            iron_torch.run("iron_softmax", x, out, 4096)
            torch.testing.assert_close(out.double(), softmax_reference(x), rtol=tolerance,
                                       atol=tolerance)

    def test_runs_on_the_current_stream(self):
        stream = torch.cuda.Stream()
        x = torch.randn(1 << 20, device="cuda")
        out = torch.full_like(x, float("nan"))
        with torch.cuda.stream(stream):
            torch.cuda.current_stream().wait_stream(torch.cuda.default_stream())
            iron_torch.run("iron_scale", x, out, 3.0, x.numel())
        stream.synchronize()
        torch.testing.assert_close(out, x * 3.0, rtol=0, atol=0)

    def test_a_captured_cuda_graph_replays_the_launch(self):
        x = torch.randn(4096, device="cuda")
        out = torch.zeros_like(x)
        iron_torch.run("iron_scale", x, out, 2.0, x.numel())  # compiled before the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            iron_torch.run("iron_scale", x, out, 2.0, x.numel())
        x.copy_(torch.arange(4096, device="cuda", dtype=torch.float32))
        out.zero_()
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, x * 2.0, rtol=0, atol=0)

    def test_a_custom_op_inside_torch_compile(self):
        softmax = iron_torch.ops.iron_softmax
        self.assertIs(softmax, torch.ops.iron.iron_softmax)

        @torch.compile(fullgraph=True)
        def doubled_softmax(x):
            out = torch.empty_like(x)
            torch.ops.iron.iron_softmax(x, out, x.shape[-1])
            return out * 2

        x = torch.randn(8, 1000, device="cuda", dtype=torch.bfloat16)
        torch.testing.assert_close(doubled_softmax(x).double(), 2 * softmax_reference(x),
                                   rtol=1e-2, atol=1e-2)

    def test_refusals_on_the_gpu(self):
        x = torch.randn(4, 64, device="cuda")
        with self.assertRaisesRegex(ValueError, "argument 'out' is on cpu"):
            iron_torch.run("iron_softmax", x, torch.empty(4, 64), 64)
        with self.assertRaisesRegex(ValueError, "dispatch refused"):
            iron_torch.run("iron_softmax", x, torch.empty(4, 32, device="cuda"), 64)
        # Nothing was launched, and the context is still usable.
        out = torch.empty_like(x)
        iron_torch.run("iron_softmax", x, out, 64)
        torch.testing.assert_close(out.double(), softmax_reference(x), rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
