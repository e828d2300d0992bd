"""OpenVINO's CPU plugin as a benchmark contender (`bench_models.py --openvino`), at its default inference precision
on this CPU (bf16 where the CPU has AVX512-BF16 or AMX, else f32) or a stated one.

    ov = openvino_module()                         # None when openvino is not installed (`pip install openvino`)
    run, precision = openvino_session(ov, model, threads=1)
    outputs = run(feeds)                           # a list of numpy arrays, in the model's output order

The model is read from an ONNX file (OpenVINO's ONNX frontend, as `ov.Core().read_model` reads a user's file) and
compiled for latency: one stream of `threads` inference threads, no pinning (the interleaved minimlc call shares the
cores). `precision` is what the compiled model reports it computes in (`INFERENCE_PRECISION_HINT`), so a table can
say which precision it compared against.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx

Feeds = dict[str, np.ndarray]

PRECISIONS = ("default", "f32", "bf16")
"""`--openvino-precision`: the plugin's own choice on this CPU, or a stated `INFERENCE_PRECISION_HINT`."""


def openvino_module() -> Any | None:
    """The openvino module, or None when it is not installed."""
    try:
        import openvino
    except ImportError:
        return None
    return openvino


def openvino_session(
    ov: Any, model: onnx.ModelProto, threads: int, precision: str = "default"
) -> tuple[Callable[[Feeds], list[np.ndarray]], str]:
    """`model` compiled by OpenVINO's CPU plugin for one-stream latency on `threads` threads, and the precision it
    computes in (`f32`, `bf16`, ...)."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown OpenVINO precision {precision!r}; choose from {', '.join(PRECISIONS)}")
    config: dict[str, Any] = {
        "PERFORMANCE_HINT": "LATENCY",
        "NUM_STREAMS": "1",
        "INFERENCE_NUM_THREADS": str(threads),
        "ENABLE_CPU_PINNING": "NO",
    }
    if precision != "default":
        config["INFERENCE_PRECISION_HINT"] = precision
    core = ov.Core()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.onnx"
        onnx.save(model, path)
        compiled = core.compile_model(core.read_model(path), "CPU", config)
    request = compiled.create_infer_request()
    ports = list(compiled.outputs)

    def run(feeds: Feeds) -> list[np.ndarray]:
        results = request.infer(feeds)
        return [np.array(results[port]) for port in ports]

    return run, compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
