"""`minimlc run`: compile an ONNX model (or load a saved one), run it, print its outputs and latency.

    minimlc run model.onnx --repeat 100 --save-outputs out/     # random inputs; out/NAME.npy per output
    minimlc run model.mlc --input x=x.npy                       # a saved model (compile -o model.mlc): no compiling
    minimlc run bert.onnx --input-shape input_ids=4,77           # symbolic dimensions kept: the shape is the run's
    minimlc run model.onnx --profile --plot roofline.png        # each kernel under the roofline (needs matplotlib)

`--profile` prints a table per kernel (time, GFLOP/s, % of peak, GB/s of its buffers, schedule); a saved model
profiles if it was saved from a profiled build.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from minimlc.tools import cli_files, cli_options
from minimlc.tools.cli_progress import compile_progress, milliseconds

if TYPE_CHECKING:
    from minimlc.frontend.signature import TensorInfo
    from minimlc.runtime.session import Session

_CHUNK = 1 << 20
"""Random input elements drawn at once (in float64) before they are cast into the input's own array."""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `run` subcommand."""
    run = commands.add_parser("run", help="compile a model (or load a saved one), run it, print outputs and latency")
    run.add_argument("model", help="an .onnx file, or a saved model (minimlc compile -o MODEL.mlc)")
    run.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy", help="an input from a .npy file")
    cli_options.add_input_shape(run, run_only=True)
    run.add_argument(
        "--repeat", type=cli_options.positive_int, default=20, help="timed runs after one warm-up (default 20)"
    )
    run.add_argument("--seed", type=int, default=0, help="seed for the random inputs not given with --input")
    run.add_argument(
        "--save-outputs", metavar="DIR", help="write each output to DIR/NAME.npy (each / of NAME written as _)"
    )
    run.add_argument(
        "--threads", type=cli_options.positive_int, help="threads for parallel loops (default: one per core)"
    )
    run.add_argument("--no-cache", action="store_true", help="compile anew, without the compile cache")
    run.add_argument("--profile", action="store_true", help="time every kernel call; print a table per kernel")
    run.add_argument("--profile-json", metavar="TRACE.json", help="with --profile: write a Chrome trace there")
    run.add_argument(
        "--profile-summary",
        metavar="FILE.json",
        help="with --profile: write the per-kernel table as JSON there (what the Model Explorer adapter overlays)",
    )
    run.add_argument(
        "--profile-clock",
        choices=("wall", "cpu"),
        help="with --profile: time kernels by wall time (default) or by the calling thread's CPU time, which other "
        "processes do not advance (needs --threads 1)",
    )
    run.add_argument(
        "--peak-gflops",
        type=cli_options.positive_float,
        help="with --profile: one core's peak (times the threads) for the %% of peak column and the headroom line "
        "(default: measured, an FMA loop)",
    )
    run.add_argument(
        "--plot",
        metavar="ROOFLINE.png",
        help="with --profile: draw each kernel (FLOP per byte of its buffers against GFLOP/s) under the roofline of "
        "the measured FMA peak and memory bandwidth (needs matplotlib)",
    )
    cli_options.add_tuning_db(run)
    cli_options.add_opt_level(run)
    cli_options.add_precision(run)
    run.set_defaults(command=run_model, opt_level=None, target=None)  # None: not given (a saved model takes neither)


def _compile_options(args: argparse.Namespace) -> list[str]:
    """The options given that only compiling uses."""
    given = {
        "-O/--opt-level": args.opt_level is not None,
        "--target": args.target is not None,
        "--precision": args.compute_precision != "fp32",
        "--tuning-db": args.tuning_db is not None,
        "--passes-after": bool(args.passes_after),
        "--load-plugin": bool(args.load_plugin),
        "--no-cache": args.no_cache,
        "--profile-clock": args.profile_clock is not None,
    }
    return [flag for flag, present in given.items() if present]


def _session(args: argparse.Namespace, model: Path, shapes: dict[str, tuple[int, ...]]) -> Session:
    """The session of `model`: loaded if it is a saved model, else compiled with the options given, its symbolic
    dimensions kept (`shapes`, the run's, fix them only to profile a model that does not compile with run-time
    dimensions)."""
    if cli_files.is_saved_model(model):
        from minimlc.runtime import load

        if compile_options := _compile_options(args):
            raise cli_options.UsageError(
                f"{args.model} is a saved model, already compiled: {', '.join(compile_options)} cannot apply to it"
            )
        session = load(model, num_threads=args.threads)
        if args.profile and session.profiler is None:
            raise cli_options.UsageError(
                f"--profile: {args.model} was not saved from a profiled build (enable_profiling=True)"
            )
        return session
    from minimlc.driver.session import InferenceSession
    from minimlc.driver.symbolic import NeedsFixedShapes

    args.opt_level = 3 if args.opt_level is None else args.opt_level
    cli_options.check_tuning_db(args)
    options = {
        "opt_level": args.opt_level,
        "num_threads": args.threads,
        "target": args.target or "host",
        "extra_passes": cli_options.extra_passes(args),
        "cache": not args.no_cache,
        "tuning_db": args.tuning_db,
        "enable_profiling": args.profile,
        "profiling_clock": args.profile_clock or "wall",
    }
    with compile_progress(args.model):
        try:
            return InferenceSession(args.model, **options)
        except NeedsFixedShapes as error:
            if not shapes:
                raise
            print(f"--profile: {error}; compiling for the run's shapes", file=sys.stderr)
            return InferenceSession(args.model, input_shapes=shapes, **options)


def random_input(rng: np.random.Generator, name: str, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """Standard-normal values cast to `dtype`, drawn a chunk at a time so that only the result is allocated whole;
    a usage error naming the input if it does not fit in memory."""
    try:
        array = np.empty(shape, dtype)
    except (MemoryError, ValueError) as error:
        raise cli_options.UsageError(f"cannot allocate random input '{name}' {list(shape)} {dtype}: {error}") from None
    flat = array.reshape(-1)
    for start in range(0, flat.size, _CHUNK):
        flat[start : start + _CHUNK] = rng.standard_normal(min(_CHUNK, flat.size - start)).astype(dtype)
    return array


def _fixed_shape(info: TensorInfo) -> tuple[int, ...]:
    """The shape of a random input: `info`'s, which must have no symbolic or unknown dimension."""
    for axis, size in enumerate(info.shape):
        if not isinstance(size, int):
            what = f"a symbolic dimension '{size}'" if isinstance(size, str) else "an unknown dimension"
            raise cli_options.UsageError(
                f"input '{info.name}' has {what} at axis {axis}; pass --input-shape {info.name}=D,D,... "
                f"(or --input {info.name}=FILE.npy)"
            )
    return info.shape  # type: ignore[return-value]


def summary(name: str, value: np.ndarray) -> str:
    """One output's line: shape, dtype, min, max, mean and argmax (none of them for an empty output)."""
    line = f"output {name}: shape {list(value.shape)} {value.dtype}"
    if value.size == 0:
        return f"{line}  (empty)"
    return (
        f"{line}  min {value.min():.6g}  max {value.max():.6g}  mean {value.mean():.6g}  argmax {int(value.argmax())}"
    )


def _save(path: Path, value: np.ndarray) -> None:
    def write(temporary: Path) -> None:
        with temporary.open("wb") as file:
            np.save(file, value)

    cli_files.write_atomically(path, write)
    print(f"wrote {path}", file=sys.stderr)


def _plot_file(args: argparse.Namespace) -> Path:
    """Where `--plot` draws: a usage error without --profile, matplotlib or a known image suffix."""
    if not args.profile:
        raise cli_options.UsageError("--plot draws the kernel profile: use it with --profile")
    if importlib.util.find_spec("matplotlib") is None:
        raise cli_options.UsageError("--plot needs matplotlib: pip install 'minimlc[plot]' (or matplotlib)")
    if Path(args.plot).suffix not in (".png", ".svg", ".pdf"):
        raise cli_options.UsageError(f"--plot {args.plot}: draws a .png, .svg or .pdf file")
    return cli_files.output_file(args.plot, "--plot")


def _write_profile_summary(path: Path, model: str, session: Session, peak: float, rows: list[dict[str, Any]]) -> None:
    """`--profile-summary`: the table's rows as JSON, with what the Model Explorer adapter needs to lower the model
    as it ran (`tools/model_explorer/profile.py` reads it)."""
    assert session.profiler is not None
    summary = {
        "format": "minimlc-profile-summary",
        "model": model,
        "opt_level": session.opt_level,
        "threads": session.num_threads,
        "runs": len(session.profiler.runs),
        "peak_gflops": peak,
        "kernels": rows,
    }
    cli_files.write_atomically(path, json.dumps(summary, indent=1))


def _bf16_peak(session: Session, given_peak: float | None) -> float | None:
    """The bfloat16 dot product loop's peak times the threads where the profiled kernels have bfloat16 products and
    no `--peak-gflops` was given (that one peak then stands for all), else None."""
    from minimlc.runtime.machine_peak import host_dot_bf16_peak_gflops

    assert session.profiler is not None
    if given_peak or not any(call.bf16_flops for call in session.profiler.calls):
        return None
    core = host_dot_bf16_peak_gflops()
    return core * session.num_threads if core else None


def run_model(args: argparse.Namespace) -> int:
    """`minimlc run MODEL`: outputs checked before any work, then compile (or load), run, time and report."""
    if args.profile_clock == "cpu" and (not args.profile or args.threads != 1):
        raise cli_options.UsageError("--profile-clock cpu times the calling thread: use it with --profile --threads 1")
    for option, value in (("--profile-json", args.profile_json), ("--profile-summary", args.profile_summary)):
        if value and not args.profile:
            raise cli_options.UsageError(f"{option} writes the kernel profile: use it with --profile")
    model = cli_files.model_file(args.model)
    plot = _plot_file(args) if args.plot else None
    folder = cli_files.output_dir(args.save_outputs, "--save-outputs") if args.save_outputs else None
    trace = cli_files.output_file(args.profile_json, "--profile-json") if args.profile_json else None
    summary_file = cli_files.output_file(args.profile_summary, "--profile-summary") if args.profile_summary else None
    feeds = cli_options.load_inputs(args.input)
    rng = np.random.default_rng(args.seed)  # before compiling: its lazy import would swallow a Ctrl-C after it
    given = {**cli_options.input_shapes(args), **{name: array.shape for name, array in feeds.items()}}
    session = _session(args, model, given)
    shapes = cli_options.run_shapes(args, session.get_inputs())
    infos = session.get_outputs()
    files = cli_files.output_files([info.name for info in infos], folder) if folder is not None else {}
    for info in session.get_inputs():
        if info.name not in feeds:
            shape = shapes.get(info.name) or _fixed_shape(info)
            feeds[info.name] = random_input(rng, info.name, shape, info.dtype)
    outputs = session.run(None, feeds)
    if session.profiler is not None:
        session.profiler.runs.clear()  # the warm-up starts the pool and faults pages in
    timings = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        session.run(None, feeds)
        timings.append(time.perf_counter() - start)

    print(f"compiled in {session.compile_seconds:.3f} s")
    for info, value in zip(infos, outputs):
        print(summary(info.name, value))
        if info.name in files:
            _save(files[info.name], value)
    median = statistics.median(timings)
    print(f"latency: median {milliseconds(median)} over {args.repeat} runs (min {milliseconds(min(timings))})")
    if session.profiler is not None:
        from minimlc.runtime.machine_peak import fma_peak_gflops
        from minimlc.runtime.profiler import headroom_line, summary_table

        peak = (args.peak_gflops or fma_peak_gflops()) * session.num_threads
        bf16_peak = _bf16_peak(session, args.peak_gflops)
        rows = session.profiler.summary(peak, bf16_peak)
        print(f"kernel profile over {len(session.profiler.runs)} runs (after the warm-up):")
        print(summary_table(rows))
        print(headroom_line(rows, peak, len(session.profiler.runs), bf16_peak))
        if trace is not None:
            cli_files.write_atomically(trace, session.end_profiling)
            print(f"wrote {trace}")
        if summary_file is not None:
            _write_profile_summary(summary_file, args.model, session, peak, rows)
            print(f"wrote {summary_file}")
        if plot is not None:
            from minimlc.tools.roofline_plot import plot_session

            print(plot_session(args.model, session, peak, rows, plot))
    return 0
