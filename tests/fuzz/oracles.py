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
from strategies import SymbolicCase

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
    difference = _difference(actual, expected)
    return Outcome("ok") if difference is None else Outcome("mismatch", difference)


def differential_symbolic(case: SymbolicCase, opt_level: int) -> tuple[Outcome, int]:
    """One minimlc session of `case.model` (symbolic inputs, one thread) against ONNX Runtime at each size of
    `case.feeds` (those ONNX Runtime runs: it may refuse empty tensors), and how many sizes it compared.

    `ok`: compiled once for every size; `fallback`: compiled per shapes, `stats["symbolic_fallback"]` saying why, for
    a graph holding a `STATIC_ONLY` op (a fallback without one is a `mismatch`, as is more than one compile without
    a fallback)."""
    ort = onnxruntime.InferenceSession(case.model.SerializeToString(), providers=["CPUExecutionProvider"])
    try:
        session = InferenceSession(case.model, opt_level=opt_level, num_threads=1)
    except (NotImplementedError, ModelImportError) as error:
        return Outcome("refused", str(error).splitlines()[0]), 0
    except Exception as error:
        return Outcome("crash", f"{type(error).__name__}: {str(error)[:300]}"), 0
    fallback = session.stats.get("symbolic_fallback")
    if fallback is not None and not case.static_only:
        return Outcome("mismatch", f"compiled per shapes without a static-only op: {fallback}"), 0
    compared = 0
    for feeds in case.feeds:
        shapes = {name: value.shape for name, value in feeds.items()}
        try:
            expected = ort.run(None, feeds)
        except onnxruntime.capi.onnxruntime_pybind11_state.Fail:
            if all(value.size for value in feeds.values()):
                raise
            continue  # ONNX Runtime takes no empty tensor here
        try:
            actual = session.run(None, feeds)
        except (NotImplementedError, ModelImportError) as error:
            return Outcome("refused", f"at {shapes}: {str(error).splitlines()[0]}"), compared
        except Exception as error:
            return Outcome("crash", f"at {shapes}: {type(error).__name__}: {str(error)[:300]}"), compared
        difference = _difference(actual, expected)
        if difference is not None:
            return Outcome("mismatch", f"at {shapes}: {difference}"), compared
        compared += 1
    compiles = session.stats["compiles"]
    if fallback is None and compiles != 1:
        return Outcome("mismatch", f"{compiles} compiles without a fallback"), compared
    return Outcome("ok" if fallback is None else "fallback", fallback or ""), compared


def _difference(actual: list[np.ndarray], expected: list[np.ndarray]) -> str | None:
    """How `actual` differs from `expected` beyond the tolerances, or None."""
    for got, want in zip(actual, expected, strict=True):
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"shape/dtype {got.shape} {got.dtype} != {want.shape} {want.dtype}"
        scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
        error = np.abs(got.astype(np.float64) - want)
        if not np.all(error <= ATOL * scale + RTOL * np.abs(want)):
            return f"max abs error {np.nanmax(error):.3g} (scale {scale:.3g})"
    return None


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
