"""1x1 bfloat16 convolutions reading their input's bfloat16 values in place (`te-bf16-word-views`, issue #50).

One model, each output against a float64 numpy reference that rounds what the build rounds, on this host (in process)
and built for AArch64 (neoverse-v1, run under qemu), with `te-bf16-activations{min-bytes=0}` so that its small
activations are stored in bfloat16 as a large model's are:

- `r = relu(conv3x3(x) + b1)`, read by two 1x1 convolutions: each pack becomes a "bf16_channels" copy of r in
  bfloat16, which makes r stored in bfloat16 and the copies views of r;
- `j = relu(conv1x1(r))`, stored in bfloat16 (read by a 1x1 convolution and by a residual add): viewed as stored;
- `t = conv1x1(j) + j`; `u` a 1x1 convolution of j with stride 2, whose pack held the 5x5 corner its stride reads:
  it reads every other pixel of the same view of j; `v` a 1x1 convolution of the 15 first channels of x (odd: its
  pack is kept);
- `p = conv3x3(relu(conv1x1(r)))`, padded: its pack is kept.

The te of an O3 build has exactly these four views, and each output is within `TOLERANCE` of the reference: the
weights of a viewed convolution pair channels 2w and 2w + 1, its words those of the stored bytes, so a pairing that
disagreed with the bytes would sum products of mismatched channels (measured: at most 5e-8 off on Zen 4).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.driver.calibration import bf16_passes
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import build_pipeline, run_pipeline
from tests.ops.test_bf16_activations import EVERY_SIZE, TOLERANCE, _rounded, on_bf16_host
from tests.ops.test_bf16_cross import TARGETS, conv, needs_qemu, run_bf16_build

OUTPUTS = ("t", "u", "v", "p")
AS_BUILT = f"te-bf16-word-views,{EVERY_SIZE}"
"""The bfloat16 build's te passes in its order, activations of any size stored in bfloat16."""
OPT_LEVELS = (0, 1, 3)
"""O0 allocates each buffer on its own, O1 plans them without fusing, O3 fuses: a view is its source's memory."""


def views_case(rng: np.random.Generator) -> tuple[onnx.ModelProto, np.ndarray, dict[str, np.ndarray]]:
    """The model, its input and the references of its outputs."""
    x = rng.standard_normal((1, 16, 6, 6)).astype(np.float32)
    weights = {
        "w1": rng.standard_normal((16, 16, 3, 3)).astype(np.float32),
        "b1": rng.standard_normal(16).astype(np.float32),
        "w2": rng.standard_normal((32, 16, 1, 1)).astype(np.float32),
        "w3": rng.standard_normal((32, 32, 1, 1)).astype(np.float32),
        "w4": rng.standard_normal((16, 32, 1, 1)).astype(np.float32),
        "w5": rng.standard_normal((16, 15, 1, 1)).astype(np.float32),
        "w6": rng.standard_normal((16, 16, 1, 1)).astype(np.float32),
        "w7": rng.standard_normal((16, 16, 3, 3)).astype(np.float32),
        "first": np.array([0], np.int64),
        "fifteen": np.array([15], np.int64),
        "channels": np.array([1], np.int64),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r"]),
        helper.make_node("Conv", ["r", "w2"], ["c2"]),
        helper.make_node("Relu", ["c2"], ["j"]),
        helper.make_node("Conv", ["j", "w3"], ["c3"]),
        helper.make_node("Add", ["c3", "j"], ["t"]),
        helper.make_node("Conv", ["j", "w4"], ["u"], strides=[2, 2]),
        helper.make_node("Slice", ["x", "first", "fifteen", "channels"], ["x15"]),
        helper.make_node("Conv", ["x15", "w5"], ["v"]),
        helper.make_node("Conv", ["r", "w6"], ["c6"]),
        helper.make_node("Relu", ["c6"], ["q"]),
        helper.make_node("Conv", ["q", "w7"], ["p"], pads=[1, 1, 1, 1]),
    ]
    initializers = [numpy_helper.from_array(value, name) for name, value in weights.items()]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in OUTPUTS]
    graph = helper.make_graph(nodes, "bf16_word_views", inputs, outputs, initializers)
    model = onnx.shape_inference.infer_shapes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    )
    w = {name: _rounded(value) for name, value in weights.items() if name.startswith("w")}
    one, none, pads = [1, 1], [0, 0, 0, 0], [1, 1, 1, 1]
    r = np.maximum(conv(_rounded(x), w["w1"], weights["b1"].astype(np.float64), one, pads), 0)
    j = _rounded(np.maximum(conv(_rounded(r), w["w2"], None, one, none), 0))
    references = {
        "t": conv(j, w["w3"], None, one, none) + j,
        "u": conv(j, w["w4"], None, [2, 2], none),
        "v": conv(_rounded(x[:, :15]), w["w5"], None, one, none),
        "p": conv(_rounded(np.maximum(conv(_rounded(r), w["w6"], None, one, none), 0)), w["w7"], None, one, pads),
    }
    return model, x, references


def _check(outputs: list[np.ndarray], references: dict[str, np.ndarray]) -> None:
    for name, got in zip(OUTPUTS, outputs, strict=True):
        reference = references[name]
        error = float(np.abs(got.astype(np.float64).ravel() - reference.ravel()).max()) / float(np.abs(reference).max())
        print(f"{name}: max |out - reference| / max {error:.1e}")
        assert error <= TOLERANCE


def test_the_pack_of_an_elementwise_value_and_of_a_stored_activation_become_views(opt_level: int) -> None:
    """At O3 (channels last) the three 1x1 packs of even channel counts are views; O0 and O1 keep activations NCHW,
    where a pack reads its two channels a plane apart: no view."""
    model, _, _ = views_case(np.random.default_rng(5))
    module = import_model(model).module
    extra = bf16_passes("znver4", {"te": AS_BUILT})
    run_pipeline(module, build_pipeline(opt_level, extra_passes=extra), stop_after="te", target="znver4")
    text = str(module)
    views = [line.strip() for line in text.splitlines() if "te.view" in line]
    print("\n".join(views))
    if opt_level < 3:
        assert not views
        assert text.count('te.compute "conv_bf16_input"') == 7
        return
    assert len(views) == 4
    assert sum("%r : tensor<1x6x6x16xbf16> to tensor<1x6x6x8xi32>" in view for view in views) == 2
    assert sum("%j : tensor<1x6x6x32xbf16> to tensor<1x6x6x16xi32>" in view for view in views) == 2  # t's, u's
    assert 'te.compute "bf16_channels"' not in text  # the copies of r and j replaced by r and j
    assert text.count('te.compute "to_bf16"') == 1  # only the sums the padded pack reads (min-bytes=0)
    assert text.count('te.compute "conv_bf16_input"') == 3  # the 3x3s' (x's: NCHW; q's: padded), v's (odd)


@on_bf16_host
def test_viewed_convolutions_on_this_host_sum_the_right_channels() -> None:
    model, x, references = views_case(np.random.default_rng(5))
    session = InferenceSession(model, precision="bf16", extra_passes={"te": AS_BUILT})
    _check(session.run(None, {"x": x}), references)


@needs_qemu
def test_viewed_convolutions_of_an_aarch64_build_sum_the_right_channels(tmp_path: Path) -> None:
    model, x, references = views_case(np.random.default_rng(5))
    printed = run_bf16_build(model, {"x": x}, TARGETS[0], 3, tmp_path, ["--passes-after", f"te:{AS_BUILT}"])
    _check(printed, references)
