"""What the CLI tests share: `minimlc(...)` runs the installed console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(sys.executable).parent


def minimlc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPTS / "minimlc"), *args], capture_output=True, text=True, check=False)
