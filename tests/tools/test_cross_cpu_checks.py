"""A cross-built library refuses to load on a CPU that cannot run its code (`driver/cpu_checks.py`), under qemu-user
CPUs with and without the features: AArch64's dot product (neoverse-n1's `udot`), I8MM and SVE of the built length
exactly (neoverse-v1's 256 bits: at 512 the code would compute garbage), RISC-V's V and its minimum VLEN. Each
library also runs where the CPU matches, so the check refuses only what it must. Skips, naming what is missing,
without the cross compilers or qemu (Debian: gcc-aarch64-linux-gnu, gcc-riscv64-linux-gnu, qemu-user)."""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from make_mlp import build_mlp

from minimlc.driver.shared_library import export_library
from minimlc.frontend.onnx import import_model

ROOT = Path(__file__).resolve().parents[2]
SYSROOTS = {"aarch64-linux-gnu": "/usr/aarch64-linux-gnu", "riscv64-linux-gnu": "/usr/riscv64-linux-gnu"}
EMULATORS = {"aarch64-linux-gnu": "qemu-aarch64", "riscv64-linux-gnu": "qemu-riscv64"}


def _needs(triple: str) -> pytest.MarkDecorator:
    missing = [tool for tool in (f"{triple}-gcc", EMULATORS[triple]) if shutil.which(tool) is None]
    return pytest.mark.skipif(
        bool(missing), reason=f"{', '.join(missing)} not installed: cannot build and run {triple}"
    )


@functools.cache
def _program(target: str) -> Path:
    """examples/c/main.c linked with the MLP's library built for `target`, and an input file, in a folder of its own
    (once per target)."""
    triple = target.split()[0]
    folder = Path(tempfile.mkdtemp(prefix="mlc-cpu-check-"))
    export_library(import_model(build_mlp()), folder / "libmodel.so", target=target)
    subprocess.run(
        [f"{triple}-gcc", "-O2", f"-I{folder}", str(ROOT / "examples" / "c" / "main.c"), f"-L{folder}", "-lmodel",
         "-Wl,-rpath,$ORIGIN", "-o", str(folder / "run_model")],
        check=True,
    )  # fmt: skip
    np.ones(build_mlp().graph.input[0].type.tensor_type.shape.dim[1].dim_value, np.float32).tofile(folder / "x.bin")
    return folder


def _run_on(target: str, cpu: str) -> subprocess.CompletedProcess[str]:
    folder = _program(target)
    triple = target.split()[0]
    return subprocess.run(
        [EMULATORS[triple], "-cpu", cpu, "-L", SYSROOTS[triple], str(folder / "run_model"),
         str(folder / "libmodel.weights"), str(folder / "x.bin")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


AARCH64, RISCV = _needs("aarch64-linux-gnu"), _needs("riscv64-linux-gnu")
RVV = "rv64,v=true,vext_spec=v1.0"
"""qemu's RISC-V CPU with the vector extension (its VLEN given beside it)."""
CASES = [
    # target, qemu CPU that runs it, qemu CPU that cannot, what the refusal names
    pytest.param(
        "aarch64-linux-gnu -mcpu=neoverse-v1", "max,sve256=on", "max,sve512=on",
        "256-bit SVE vectors (its SVE vectors are 512 bits)", marks=AARCH64, id="sve-length",
    ),
    pytest.param(
        "aarch64-linux-gnu -mcpu=neoverse-v1", "max,sve256=on", "neoverse-n1", "i8mm", marks=AARCH64, id="i8mm"
    ),
    pytest.param(
        "aarch64-linux-gnu -mattr=+sve -msve-vector-bits=512", "max,sve512=on", "neoverse-n1", "sve",
        marks=AARCH64, id="sve",
    ),
    pytest.param(
        "aarch64-linux-gnu -mcpu=neoverse-n1", "neoverse-n1", "cortex-a53", "dotprod", marks=AARCH64, id="dotprod"
    ),
    pytest.param(
        "aarch64-linux-gnu -mattr=+bf16", "max", "neoverse-n1", "bf16", marks=AARCH64, id="bf16"
    ),
    pytest.param(
        "riscv64-linux-gnu -mattr=+v,+zvl256b", f"{RVV},vlen=256", f"{RVV},vlen=128",
        "vectors of at least 256 bits (its VLEN is 128)", marks=RISCV, id="vlen",
    ),
    pytest.param(
        "riscv64-linux-gnu -mattr=+v", f"{RVV},vlen=128", "rv64", "v", marks=RISCV, id="rvv"
    ),
]  # fmt: skip


@pytest.mark.parametrize(("target", "runs_on", "refused_on", "lacking"), CASES)
def test_a_library_loads_only_on_a_cpu_that_runs_its_code(
    target: str, runs_on: str, refused_on: str, lacking: str
) -> None:
    ran = _run_on(target, runs_on)
    assert ran.returncode == 0, ran.stderr
    assert "output " in ran.stdout
    refused = _run_on(target, refused_on)
    assert refused.returncode != 0
    assert refused.stdout == ""
    assert refused.stderr.strip() == (
        f"model: this CPU lacks {lacking}, which the code built for target '{target}' uses: build the library for "
        "this CPU (minimlc build --target)"
    )


def test_a_plain_aarch64_library_loads_on_the_smallest_cpu() -> None:
    """NEON code (no `-mcpu`) needs nothing beyond the architecture: no check can refuse it."""
    if shutil.which("aarch64-linux-gnu-gcc") is None or shutil.which("qemu-aarch64") is None:
        pytest.skip("aarch64-linux-gnu-gcc or qemu-aarch64 not installed")
    ran = _run_on("aarch64-linux-gnu", "cortex-a53")
    assert ran.returncode == 0, ran.stderr
