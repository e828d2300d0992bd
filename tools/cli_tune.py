"""`minimlc tune`: search schedules for a model's kernels and remember the fastest in a tuning database.

A tuning is resumable (Ctrl-C stops it, keeping every record measured), and its database applies wherever a model
is compiled:

    minimlc tune model.onnx --trials 64 --db tuning.jsonl            # run it again to go on
    minimlc tune bert.onnx --input-shape ids=1,128 --trials 64 --db tuning.jsonl   # a symbolic batch and length
    minimlc run model.onnx --tuning-db tuning.jsonl                  # apply the best records
    minimlc tune model.onnx --trials 256 --db tuning.jsonl --runner ray --ray-address HEAD:6379   # on a cluster
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from minimlc.tools import cli_files, cli_options


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `tune` subcommand."""
    tune = commands.add_parser("tune", help="tune the model's kernel schedules into a tuning database")
    tune.add_argument("model", help="path to an .onnx file")
    tune.add_argument("--trials", type=cli_options.positive_int, required=True, help="candidates to measure in all")
    tune.add_argument("--db", required=True, metavar="PATH", help="the JSON-lines tuning database (created if missing)")
    cli_options.add_input_shape(tune)
    tune.add_argument("--trials-per-task", type=cli_options.positive_int, help="at most this many per kernel")
    tune.add_argument(
        "--threads", type=cli_options.positive_int, default=1, help="threads each candidate runs on (default 1)"
    )
    tune.add_argument(
        "--timeout",
        type=cli_options.positive_float,
        default=60.0,
        help="seconds a candidate may take to build and time (60)",
    )
    tune.add_argument("--seed", type=int, default=0, help="seed of the random search (default 0)")
    tune.add_argument(
        "--cache",
        choices=("auto", "warm", "cold"),
        default="auto",
        help="where candidates find their weights when a timed call starts: in the caches (warm) or in memory, "
        "flushed before each call (cold); auto (default): warm where the model's weights fit the L2, else each task "
        "as the model's profile says its heaviest kernels find theirs",
    )
    tune.add_argument(
        "--no-verify",
        dest="verify",
        action="store_false",
        help="do not check the chosen schedules in the model afterwards (by default each tuned kernel is timed in the "
        "model against its default schedule and rejected where it is slower there)",
    )
    tune.add_argument(
        "--peak-gflops",
        type=cli_options.positive_float,
        help="one core's peak, times --threads, which ranks the tasks by the room they have left (default: "
        "measured, an FMA loop)",
    )
    tune.add_argument(
        "--plot",
        metavar="CURVES.png",
        help="draw the tuning curves there: the total, then one per task (needs matplotlib)",
    )
    tune.add_argument(
        "--runner",
        choices=("local", "ray"),
        default="local",
        help="where candidates are timed: a worker process here (local, default) or the workers of a Ray cluster "
        "(ray: see minimlc worker; needs pip install 'minimlc[distributed]')",
    )
    tune.add_argument("--ray-address", metavar="HOST:PORT", help="the Ray cluster's head (with --runner ray)")
    tune.add_argument(
        "--target-key",
        metavar="CPU",
        help="the target CPU the workers offer (with --runner ray; default: --target's CPU, this host's)",
    )
    tune.add_argument(
        "--parallel",
        type=cli_options.positive_int,
        help="core sets timing at once (with --runner ray; default: every one the cluster offers for the target)",
    )
    cli_options.add_opt_level(tune, pipeline_passes=False)
    cli_options.add_precision(tune)
    tune.set_defaults(command=tune_model)


def tune_model(args: argparse.Namespace) -> int:
    """`minimlc tune MODEL --db D`: the model and database checked before any work, then tune; on Ctrl-C, say what
    `D` keeps and exit 130."""
    from minimlc.tuner.tuner import precision_passes, tune

    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise cli_options.UsageError("--plot needs matplotlib: pip install 'minimlc[plot]' (or matplotlib)")
    cli_files.model_file(args.model)
    _check_runner(args)
    database = cli_files.output_file(args.db, "--db")
    if args.plot:
        cli_files.output_file(args.plot, "--plot")
    kept = _records(database)
    try:
        precision_passes(args.compute_precision, args.target)  # refused before any work
    except ValueError as error:
        raise cli_options.UsageError(str(error)) from None
    try:
        result = tune(
            args.model,
            database,
            input_shapes=cli_options.input_shapes(args) or None,
            trials=args.trials,
            trials_per_task=args.trials_per_task,
            threads=args.threads,
            timeout=args.timeout,
            opt_level=args.opt_level,
            target=args.target,
            seed=args.seed,
            cache=args.cache,
            verify=args.verify,
            peak_gflops=args.peak_gflops,
            runner=args.runner,
            ray_address=args.ray_address,
            ray_target_key=args.target_key,
            parallel=args.parallel,
            precision=args.compute_precision,
        )
    except KeyboardInterrupt:
        total = _records(database)
        print(
            f"\nminimlc: interrupted: {total} record(s) kept in {database} ({total - kept} from this run); run the "
            "same command to go on",
            file=sys.stderr,
        )
        return cli_options.INTERRUPTED
    print(f"records in {args.db}; apply them with --tuning-db {args.db}")
    if args.plot:
        from minimlc.tools.tuning_plot import draw_tuning_curves

        draw_tuning_curves(result.curve, result.task_curves, Path(args.plot))
        print(f"wrote {args.plot}: the total and {len(result.task_curves)} task curve(s)")
    return 0


def _check_runner(args: argparse.Namespace) -> None:
    """The runner's options agree, Ray is installed and the cluster answers, before any work."""
    ray_options = [name for name in ("ray_address", "target_key", "parallel") if getattr(args, name) is not None]
    if args.runner == "local":
        if ray_options:
            raise cli_options.UsageError(f"--{ray_options[0].replace('_', '-')} needs --runner ray")
        return
    if args.ray_address is None:
        raise cli_options.UsageError("--runner ray needs --ray-address HOST:PORT")
    if importlib.util.find_spec("ray") is None:
        raise cli_options.UsageError("--runner ray needs Ray: pip install 'minimlc[distributed]'")
    from minimlc.lowering.target import target_from_name
    from minimlc.tuner.ray_runner import check_reachable

    if args.target_key is not None:
        try:
            key = target_from_name(args.target_key).cpu
        except ValueError as error:
            raise cli_options.UsageError(f"--target-key: {error}") from None
        if args.target != "host" and key != target_from_name(args.target).cpu:
            raise cli_options.UsageError(f"--target-key {args.target_key} is not --target {args.target}'s CPU")
    check_reachable(args.ray_address)


def _records(database: Path) -> int:
    """The records in `database` (0 if there is none yet); a `TuningDatabaseError` for one that is not a database."""
    from minimlc.lowering.strategy.tuning_db import TuningDatabase

    return len(TuningDatabase(database).records)
