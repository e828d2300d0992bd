"""argparse types the benchmarks share: each refuses a bad value with a one-line message naming it.

parser.add_argument("--threads", type=thread_counts, default=[1, 2])   # "1,2" -> [1, 2]; "0" is refused
"""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def non_negative_int(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return int(text)


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def thread_counts(text: str) -> list[int]:
    try:
        return [positive_int(part) for part in text.split(",")]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got {text!r}") from None
