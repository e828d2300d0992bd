"""The checks the fuzzers apply to one case, shared by `test_differential.py` and `bench/fuzz.py`.

Each returns an `Outcome`: `ok`, `refused` (a clear `NotImplementedError`/`ModelImportError` for what minimlc lacks),
or `mismatch`/`crash` with a message.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import NamedTuple

import numpy as np
import onnx
import onnxruntime

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, import_model
from minimlc.tools import mini_opt

RTOL = 1e-4
ATOL = 1e-4
"""Per tensor: |minimlc - ORT| <= ATOL * max(1, max|ORT|) + RTOL * |ORT| (float32, sums in other orders)."""

FILECHECK_DIR = Path(__file__).parents[1] / "filecheck"


class Outcome(NamedTuple):
    kind: str
    message: str = ""


def differential(model: onnx.ModelProto, feeds: dict[str, np.ndarray], opt_level: int) -> Outcome:
    """minimlc at `opt_level` (one thread) against ONNX Runtime."""
    ort = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = ort.run(None, feeds)
    try:
        actual = InferenceSession(model, opt_level=opt_level, num_threads=1).run(None, feeds)
    except (NotImplementedError, ModelImportError) as error:
        return Outcome("refused", str(error).splitlines()[0])
    except Exception as error:
        return Outcome("crash", f"{type(error).__name__}: {str(error)[:300]}")
    for got, want in zip(actual, expected, strict=True):
        if got.shape != want.shape or got.dtype != want.dtype:
            return Outcome("mismatch", f"shape/dtype {got.shape} {got.dtype} != {want.shape} {want.dtype}")
        scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
        error = np.abs(got.astype(np.float64) - want)
        if not np.all(error <= ATOL * scale + RTOL * np.abs(want)):
            return Outcome("mismatch", f"max abs error {np.nanmax(error):.3g} (scale {scale:.3g})")
    return Outcome("ok")


def load_bytes(data: bytes) -> Outcome:
    """`import_model(bytes)`: a model, or a clear `ModelImportError` (an unsupported-feature one included)."""
    try:
        import_model(data)
    except ModelImportError as error:
        return Outcome("refused", str(error).splitlines()[0] if str(error) else "")
    except Exception as error:
        return Outcome("crash", f"{type(error).__name__}: {str(error)[:300]}")
    return Outcome("ok")


def parse_text(text: str, tmp_dir: Path) -> Outcome:
    """`mini-opt` on `text`: output, or exit status 1 with `mini-opt: error:` (never an uncaught exception)."""
    source = tmp_dir / "input.mlir"
    source.write_text(text)
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = mini_opt.main([str(source)])
    except SystemExit as exit:
        status = exit.code
    except Exception as error:
        return Outcome("crash", f"{type(error).__name__}: {str(error)[:300]}")
    if status == 0:
        return Outcome("ok")
    if status == 1 and "error" in stderr.getvalue():
        return Outcome("refused", stderr.getvalue().splitlines()[0][:200] if stderr.getvalue() else "")
    return Outcome("crash", f"exit status {status}: {stderr.getvalue()[-300:]}")


def mlir_seeds() -> list[str]:
    """The valid inputs the parser fuzzer mutates: every `.mlir` test input that mini-opt reads whole."""
    return [
        path.read_text()
        for path in sorted(FILECHECK_DIR.rglob("*.mlir"))
        if "split-input-file" not in path.read_text() and "verify-diagnostics" not in path.read_text()
    ]


def mutate(data: bytes, rng: np.random.Generator) -> bytes:
    """1 to 8 random edits: flip a byte, delete, duplicate or truncate a span."""
    buffer = bytearray(data)
    for _ in range(int(rng.integers(1, 9))):
        if not buffer:
            break
        position = int(rng.integers(0, len(buffer)))
        edit = int(rng.integers(0, 4))
        if edit == 0:
            buffer[position] = int(rng.integers(0, 256))
        elif edit == 1:
            del buffer[position : position + int(rng.integers(1, 16))]
        elif edit == 2:
            buffer[position:position] = buffer[position : position + int(rng.integers(1, 16))]
        else:
            del buffer[position:]
    return bytes(buffer)
