"""The `load` stage: precomputed buffers as aligned views of one populated block, filled by the init entry with the
same outputs (numerics vs onnxruntime, rebound weights too); a process's first compile takes the thread pool's code
from a forked child as object code, and one compile job compiles it in process."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.runtime.compiled import ALIGNMENT, POPULATED_FROM, fresh_buffers

LAYOUTS = [((3, 5), np.float32), ((7,), np.int8), ((2, 2, 3), np.float64), ((1,), np.int32)]


def _owner(array: np.ndarray) -> object:
    """The object that owns `array`'s memory: the array numpy allocated, or the object a buffer came from."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    if array.base is None:
        return array
    return array.base.obj if isinstance(array.base, memoryview) else array.base


@pytest.mark.parametrize("scale", [1, POPULATED_FROM // 64])
def test_fresh_buffers_are_aligned_disjoint_views_of_one_block(scale: int) -> None:
    layouts = [((shape[0] * scale, *shape[1:]), dtype) for shape, dtype in LAYOUTS]
    buffers = fresh_buffers(layouts)
    assert [(b.shape, b.dtype) for b in buffers] == [(shape, np.dtype(dtype)) for shape, dtype in layouts]
    assert all(b.ctypes.data % ALIGNMENT == 0 and b.flags.writeable and b.flags.c_contiguous for b in buffers)
    assert len({id(_owner(b)) for b in buffers}) == 1
    assert isinstance(_owner(buffers[0]), mmap.mmap) == (scale > 1)  # from POPULATED_FROM bytes on, one mapping
    for index, buffer in enumerate(buffers):
        buffer[...] = index + 1
    assert [np.unique(b).tolist() for b in buffers] == [[index + 1] for index in range(len(buffers))]


def test_no_buffers_make_an_empty_list() -> None:
    assert fresh_buffers([]) == []


def conv_model(weight: np.ndarray) -> bytes:
    """Conv 3x3 with `weight` (256 -> 256 channels: 2.4 MB, packed at load) + Relu on a 4x4 image."""
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256, 4, 4])],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_populated_precomputed_weights_give_onnxruntimes_outputs() -> None:
    rng = np.random.default_rng(0)
    first, second = (rng.standard_normal((256, 256, 3, 3)).astype(np.float32) * 0.05 for _ in range(2))
    feeds = {"x": rng.standard_normal((1, 256, 4, 4)).astype(np.float32)}
    session = InferenceSession(conv_model(first), cache=False)
    assert sum(buffer.nbytes for buffer in session._model.precomputed) >= POPULATED_FROM
    rebound = session.with_weights({"w": second})
    for compiled, weight in ((session, first), (rebound, second)):
        reference = ort.InferenceSession(conv_model(weight), providers=["CPUExecutionProvider"])
        np.testing.assert_allclose(compiled.run(None, feeds)[0], reference.run(None, feeds)[0], rtol=1e-4, atol=1e-4)


POOL_CODE = """
import numpy as np
from onnx import TensorProto, helper
from minimlc import InferenceSession
from minimlc.runtime.threadpool import native_pool, pool_code_ready
model = helper.make_model(helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"])], "relu",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])]))
assert not pool_code_ready()
x = np.linspace(-1, 1, 64, dtype=np.float32)
(y,) = InferenceSession(model.SerializeToString(), cache=False).run(None, {"x": x})
assert np.array_equal(y, np.maximum(x, 0))
print(type(native_pool().jit).__name__)
"""


@pytest.mark.parametrize(("jobs", "pool_code"), [("2", "ObjectModule"), ("1", "JitModule")])
def test_first_compile_takes_the_pool_code_from_a_child_unless_one_job(jobs: str, pool_code: str) -> None:
    env = {**os.environ, "MINIMLC_COMPILE_JOBS": jobs}
    result = subprocess.run([sys.executable, "-c", POOL_CODE], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == pool_code
