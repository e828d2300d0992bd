"""The measuring worker leaves quietly: a job timed out, or a parent gone, is no traceback on the terminal."""

from __future__ import annotations

import time

import pytest

from minimlc.tuner.measure import Measurer


def test_a_timed_out_job_answering_late_prints_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    """`tune --timeout 0.001` used to print a BrokenPipeError traceback per candidate: the worker answered the
    job the parent had stopped waiting for."""
    with Measurer(timeout=60) as measurer:
        assert measurer.run(time.sleep, 0.0) is None  # type: ignore[arg-type]  # the worker is up
        measurer.timeout = 0.2
        late = measurer.run(time.sleep, 0.5)  # type: ignore[arg-type]  # answers after the parent gave up
        assert late.latency is None and "timed out after 0.2 s" in (late.error or "")
        time.sleep(1.0)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
