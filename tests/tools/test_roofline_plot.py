"""The roofline plot: kernel points from a profile's flops and bytes (against hand-computed numbers), the drawn points
read back from the plot, and `minimlc run --profile --plot` on the command line, for an .onnx and a saved model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_run import assert_one_line_error, minimlc

from minimlc.runtime.profiler import ProfiledCall, Profiler
from minimlc.tools.roofline_plot import KernelPoint, draw_roofline, roofline_points

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _profile(calls: list[ProfiledCall], spans_ns: list[tuple[int, int]], runs: int) -> Profiler:
    """A profiler whose `runs` runs each timed call k from `spans_ns[k][0]` to `spans_ns[k][1]` (ns)."""
    buffer = np.zeros(32 * len(calls), np.uint8)
    profiler = Profiler(calls, buffer)
    clock = buffer.view(np.int64).reshape(len(calls), 2, 2)
    for index, (start, end) in enumerate(spans_ns):
        clock[index] = [divmod(start, 1_000_000_000), divmod(end, 1_000_000_000)]
    for _ in range(runs):
        profiler.record_run(0, 0)
    return profiler


def test_points_are_flops_per_byte_and_measured_gflops() -> None:
    calls = [
        ProfiledCall("conv", 2_000_000, "conv", (), 500_000),  # 1 ms a call: 2 GFLOP/s; 4 FLOP/byte
        ProfiledCall("relu", 1_000, "elementwise", (), 8_000),  # 2 us twice a run: 0.5 GFLOP/s; 0.125 FLOP/byte
        ProfiledCall("relu", 1_000, "elementwise", (), 8_000),
        ProfiledCall("copy", 0, "copy", (), 64),  # no float work: not drawn
        ProfiledCall("gather", 4_000, "gather"),  # bytes not known (dynamic shapes): not drawn
    ]
    spans = [
        (0, 1_000_000),
        (1_000_000, 1_002_000),
        (1_002_000, 1_004_000),
        (1_004_000, 1_005_000),
        (1_005_000, 1_006_000),
    ]
    profiler = _profile(calls, spans, runs=3)
    rows = profiler.summary()
    points = roofline_points(rows)
    assert points == [
        KernelPoint("conv", pytest.approx(4.0), pytest.approx(2.0), pytest.approx(3.0)),
        KernelPoint("relu", pytest.approx(0.125), pytest.approx(0.5), pytest.approx(0.012)),
    ]


def test_the_plot_holds_the_points(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    points = [KernelPoint("conv", 4.0, 2.0, 3.0), KernelPoint("relu", 0.125, 0.5, 0.012)]
    path = tmp_path / "roofline.png"
    drawn = draw_roofline(points, peak_gflops=100.0, bandwidth_gbs=10.0, path=path, title="test")
    np.testing.assert_allclose(drawn, [[4.0, 2.0], [0.125, 0.5]])
    assert path.read_bytes().startswith(PNG_SIGNATURE)


@pytest.mark.parametrize("saved", [False, True], ids=["onnx", "mlc"])
def test_minimlc_run_profile_plot_writes_a_png(mlp_path: Path, tmp_path: Path, saved: bool) -> None:
    """A saved profiled build plots from its profile alone, as its .onnx does."""
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    model = mlp_path
    if saved:
        from minimlc import InferenceSession

        model = tmp_path / "mlp.mlc"
        InferenceSession(str(mlp_path), enable_profiling=True, num_threads=1).save(model)
    path = tmp_path / "roofline.png"
    result = minimlc(
        "run", str(model), "--profile", "--plot", str(path), "--repeat", "2", "--threads", "1", "--peak-gflops", "50"
    )
    assert result.returncode == 0, result.stderr
    assert f"wrote {path}: 2 kernels under 50.0 GFLOP/s and" in result.stdout
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 10_000


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--plot", "roofline.png"], "--plot draws the kernel profile: use it with --profile"),
        (["--profile", "--plot", "roofline.txt"], "--plot roofline.txt: draws a .png, .svg or .pdf file"),
    ],
)
def test_plot_usage_errors(mlp_path: Path, options: list[str], message: str) -> None:
    assert_one_line_error(minimlc("run", str(mlp_path), *options), message)


def test_plot_without_matplotlib_names_the_extra(mlp_path: Path, tmp_path: Path) -> None:
    hide = "import sys; sys.modules['matplotlib'] = None; from minimlc.tools.minimlc_cli import main; "
    run = f"sys.exit(main(['run', {str(mlp_path)!r}, '--profile', '--plot', {str(tmp_path / 'r.png')!r}]))"
    result = subprocess.run([sys.executable, "-c", hide + run], capture_output=True, text=True, check=False)
    assert_one_line_error(result, "--plot needs matplotlib: pip install 'minimlc[plot]' (or matplotlib)")
