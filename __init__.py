"""minimlc: a TVM-style deep-learning compiler built on xDSL. This file is the package's front door; the folders
beside it are its rooms, each importable as `minimlc.<folder>`.

    import minimlc
    session = minimlc.InferenceSession("examples/mlp.onnx")      # compile (driver/), then run (runtime/)
    int8 = minimlc.quantize_static(model, calibration_feeds)      # a float model -> int8 QDQ (driver/calibration.py)
    saved = minimlc.load("mlp.mlc")                              # run a saved model: no xDSL, no ONNX
    from minimlc import te
    from minimlc.schedule import Schedule
    f = minimlc.build(te.create_function([A, B, C]))   # or minimlc.build(Schedule(...))
    minimlc.register_func("env.relu", lambda x, out: np.maximum(x, 0, out=out))
    bb = minimlc.GraphBuilder()
    imported = minimlc.from_exported_program(torch.export.export(model, (x,)))   # PyTorch (the `torch` extra)
    imported = minimlc.from_fx(torch.fx.symbolic_trace(model), [(1, 784)])
    compiled = torch.compile(model, backend="minimlc")
    new_ids = minimlc.Generator("llama.onnx", max_length=256).generate([1, 2, 3], max_new_tokens=64)

Names load lazily, so that `import minimlc` (and `minimlc.runtime`) loads neither xDSL nor the compiler.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Generator": "minimlc.generation.generator",
    "GraphBuilder": "minimlc.frontend.graph_builder",
    "InferenceSession": "minimlc.driver.session",
    "build": "minimlc.driver.build",
    "from_exported_program": "minimlc.frontend.torch.exported_program",
    "from_fx": "minimlc.frontend.torch.fx",
    "load": "minimlc.runtime.session",
    "partition_for_target": "minimlc.byoc.partition",
    "quantize_static": "minimlc.driver.calibration",
    "register_func": "minimlc.runtime.extern",
}
"""Public name -> the module that defines it."""

_PACKAGES = ("schedule", "te")
"""Subpackages importable as attributes (`minimlc.te`)."""

__all__ = sorted([*_EXPORTS, *_PACKAGES])


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    if name in _PACKAGES:
        return import_module(f"minimlc.{name}")
    raise AttributeError(f"module 'minimlc' has no attribute {name!r}")
