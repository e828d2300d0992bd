"""The rows `bench_models.py` measures and the fixed-width table it prints of them (missing figures show "-").

print(table_header(tuned=False, openvino=True))
print(table_row(Row("resnet50", 1, minimlc_ms=21.0, ort_ms=27.5, ...), openvino=True))
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Row:
    """One workload at one thread count; None where a figure is missing (no ONNX Runtime, or an error)."""

    workload: str
    threads: int
    gflop: float | None = None
    compile_seconds: float | None = None
    minimlc_ms: float | None = None
    ort_ms: float | None = None
    minimlc_over_ort: float | None = None
    minimlc_over_first: float | None = None
    """minimlc's latency at `threads` over its latency at the first thread count (1.0 in the first row)."""
    ort_over_first: float | None = None
    minimlc_gflops: float | None = None
    minimlc_pct_peak: float | None = None
    ort_gflops: float | None = None
    ort_pct_peak: float | None = None
    max_abs_diff_vs_ort: float | None = None
    rounds: int = 0
    minimlc_parallel: bool | None = None
    """Whether minimlc's compiled module has a parallel loop (if not, it runs on one thread whatever `threads`)."""
    tuned_ms: float | None = None
    """With `--tuning-db`: the build with the database's best schedules."""
    tuned_over_default: float | None = None
    tuned_over_ort: float | None = None
    tuned_max_abs_diff: float | None = None
    """Largest difference of the tuned build's outputs from the default build's."""
    openvino_ms: float | None = None
    """With `--openvino`: OpenVINO's CPU plugin, in the same rounds (`openvino_contender.py`)."""
    minimlc_over_openvino: float | None = None
    max_abs_diff_vs_openvino: float | None = None
    errors: list[str] = field(default_factory=list)


COLUMNS = (
    # (header, Row field, width, format spec)
    ("workload", "workload", 14, ""),
    ("thr", "threads", 3, "d"),
    ("GFLOP", "gflop", 8, ".3g"),
    ("compile s", "compile_seconds", 9, ".1f"),
    ("minimlc ms", "minimlc_ms", 10, ".3f"),
    ("ORT ms", "ort_ms", 9, ".3f"),
    ("mlc/ORT", "minimlc_over_ort", 7, ".2f"),
    ("mlc/first", "minimlc_over_first", 9, ".2f"),
    ("ORT/first", "ort_over_first", 9, ".2f"),
    ("GFLOP/s", "minimlc_gflops", 8, ".1f"),
    ("%peak", "minimlc_pct_peak", 6, ".1f"),
    ("ORT GFLOP/s", "ort_gflops", 11, ".1f"),
    ("ORT %peak", "ort_pct_peak", 9, ".1f"),
    ("max|diff|", "max_abs_diff_vs_ort", 9, ".1e"),
    ("rounds", "rounds", 6, "d"),
)
TUNED_COLUMNS = (
    ("tuned ms", "tuned_ms", 9, ".3f"),
    ("tuned/def", "tuned_over_default", 9, ".3f"),
    ("tuned/ORT", "tuned_over_ort", 9, ".2f"),
)
"""Appended to `COLUMNS` with `--tuning-db`."""
OPENVINO_COLUMNS = (
    ("OV ms", "openvino_ms", 9, ".3f"),
    ("mlc/OV", "minimlc_over_openvino", 6, ".2f"),
    ("max|diff OV|", "max_abs_diff_vs_openvino", 12, ".1e"),
)
"""Appended with `--openvino`."""


def table_columns(tuned: bool = False, openvino: bool = False) -> tuple[tuple[str, str, int, str], ...]:
    return COLUMNS + TUNED_COLUMNS * tuned + OPENVINO_COLUMNS * openvino


def table_header(tuned: bool = False, openvino: bool = False) -> str:
    return "  ".join(
        f"{header:<{width}}" if index == 0 else f"{header:>{width}}"
        for index, (header, _, width, _) in enumerate(table_columns(tuned, openvino))
    )


def table_row(row: Row, tuned: bool = False, openvino: bool = False) -> str:
    """One fixed-width line (missing figures show "-"), then a line per error."""
    cells = [f"{row.workload:<{COLUMNS[0][2]}}"]
    for _, key, width, spec in table_columns(tuned, openvino)[1:]:
        value = getattr(row, key)
        cells.append(f"{'-':>{width}}" if value is None else f"{value:>{width}{spec}}")
    return "\n".join(["  ".join(cells), *(f"    error: {error}" for error in row.errors)])
