"""`minimlc compile -o MODEL.mlc` (a saved model) and `minimlc cache info|clear`, out of minimlc_cli.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from minimlc.tools.cli_progress import compile_progress


def save_model(
    args: argparse.Namespace, extra_passes: dict[str, list[str]] | None, input_shapes: dict[str, tuple[int, ...]]
) -> int:
    """Compile `args.model` for `input_shapes` (through the cache unless `--no-cache`) and save it to `args.output`
    for `minimlc.runtime.load`."""
    from minimlc.driver.session import InferenceSession

    with compile_progress(args.model, f" at O{args.opt_level}"):
        session = InferenceSession(
            args.model,
            input_shapes=input_shapes,
            opt_level=args.opt_level,
            target=args.target,
            extra_passes=extra_passes,
            cache=not args.no_cache,
            tuning_db=args.tuning_db,
        )
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    session.save(args.output)  # atomically: a temporary file renamed into place
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def cache_command(args: argparse.Namespace) -> int:
    """`info`: where the compile cache is, its model and kernel entries and their bytes; `clear`: empty it."""
    from minimlc.driver import cache, kernel_cache

    if args.action == "clear":
        models, kernels = cache.clear(), kernel_cache.clear()
        print(f"removed {models} entries and {kernels} kernel entries from {cache.cache_dir()}")
        return 0
    state = "on" if cache.cache_enabled() else "off (MINIMLC_CACHE=0)"
    print(f"cache: {cache.cache_dir()} ({state})")
    for label, entries in (("entries", cache.entries()), ("kernel entries", kernel_cache.entries())):
        print(f"{label}: {len(entries)}, {sum(path.stat().st_size for path in entries)} bytes")
    return 0
