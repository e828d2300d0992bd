"""What the CLI tests share: `minimlc(...)` runs the installed console script, `assert_one_line_error` checks how
it failed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(sys.executable).parent


def minimlc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPTS / "minimlc"), *args], capture_output=True, text=True, check=False)


def assert_one_line_error(result: subprocess.CompletedProcess[str], message: str) -> None:
    """Exit status 1, no traceback, and one `minimlc: error:` line, holding `message`."""
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("minimlc: error:")]
    assert len(errors) == 1 and message in errors[0], result.stderr
