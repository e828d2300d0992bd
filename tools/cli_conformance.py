"""`minimlc conformance`: onnx's node tests (and light models) through minimlc, by op, against the expected failures.

    minimlc conformance --ops Conv,Relu          # exit 1 if a test fails that the expected-failures list does not name
    minimlc conformance --light --write-expected-failures tools/conformance_expected_failures.txt   # record them

Each failure is labelled `expected` (listed, with the kind it failed with) or `UNEXPECTED`, and so is a listed test
that passes (`UNEXPECTED pass`: its entry can go). The list is `--expected-failures FILE`, else the one
`--write-expected-failures` updates, else the list this version of minimlc ships
(`tools/conformance_expected_failures.txt`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from minimlc.tools import cli_files, cli_options

if TYPE_CHECKING:
    from minimlc.tools.conformance import ConformanceTest, ExpectedFailure, Result

CHECKED_IN_LIST = Path(__file__).with_name("conformance_expected_failures.txt")
"""The onnx tests this version of minimlc is known to fail, installed with it."""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `conformance` subcommand."""
    conformance = commands.add_parser("conformance", help="run onnx's node tests, print outcomes by op")
    conformance.add_argument(
        "--ops",
        type=cli_options.op_list,
        metavar="OP,OP",
        help="only these ops (e.g. Conv,Relu; light_models: the light CNNs)",
    )
    conformance.add_argument("--light", action="store_true", help="also run the nine light CNNs (slow)")
    conformance.add_argument(
        "--expected-failures",
        metavar="FILE",
        help="the tests expected to fail, each with its kind of failure (default: the --write-expected-failures "
        "FILE, else the list installed with minimlc)",
    )
    conformance.add_argument(
        "--write-expected-failures",
        metavar="FILE",
        help="write the tests that did not pass to FILE (entries for tests not run are kept); exit 0 even on "
        "unexpected failures, which FILE then lists",
    )
    conformance.add_argument(
        "--json", metavar="FILE", help="write each test's classification (native, constant, failed, ...) to FILE"
    )
    conformance.add_argument("-v", "--verbose", action="store_true", help="list the expected unsupported tests too")
    conformance.set_defaults(command=run_conformance)


def label(result: Result, expected: Mapping[str, ExpectedFailure]) -> str:
    """How `result` compares with the `expected` failures: "" (a pass, unlisted), `expected`, `UNEXPECTED` (a
    failure unlisted or of another kind than listed) or `UNEXPECTED pass`:

        label(run_test(relu_test), {"test_relu": ExpectedFailure("mismatch")}) == "UNEXPECTED pass"
    """
    entry = expected.get(result.test.name)
    if result.outcome.passed:
        return "" if entry is None else "UNEXPECTED pass"
    return "expected" if entry is not None and entry.kind == result.kind else "UNEXPECTED"


def _expected_failures(args: argparse.Namespace) -> tuple[Path | None, dict[str, ExpectedFailure]]:
    """The list the run is compared with (None: none) and its entries; a usage error for a list that cannot be read,
    the one `--write-expected-failures` updates included, before any test runs."""
    writing = Path(args.write_expected_failures) if args.write_expected_failures else None
    if writing is not None and writing.exists():
        _read_listing(writing)
    if args.expected_failures is not None:
        listing: Path | None = Path(args.expected_failures)
    elif writing is not None and writing.exists():
        listing = writing
    else:
        listing = CHECKED_IN_LIST if CHECKED_IN_LIST.is_file() else None
    return listing, _read_listing(listing) if listing is not None else {}


def _read_listing(path: Path) -> dict[str, ExpectedFailure]:
    from minimlc.tools import conformance

    try:
        return conformance.read_expected_failures(path)
    except (OSError, ValueError) as error:  # the message names the file (a UnicodeDecodeError does not)
        message = str(error) if str(path) in str(error) else f"{path}: {error}"
        raise cli_options.UsageError(message) from None


def run_conformance(args: argparse.Namespace) -> int:
    """`minimlc conformance`: the tests of `--ops` (all), a table by op, the failures labelled; 1 on an unexpected
    failure unless `--write-expected-failures` records it."""
    import onnx

    from minimlc.frontend.onnx_operators import OTHER_DOMAINS
    from minimlc.tools import conformance

    domains = ("", *OTHER_DOMAINS)
    unknown = [
        op
        for op in args.ops or []
        if op != conformance.LIGHT_MODEL_GROUP and not any(onnx.defs.has(op, domain) for domain in domains)
    ]
    if unknown:
        raise cli_options.UsageError(f"--ops names unknown ONNX operator(s): {', '.join(unknown)}")
    listing, expected = _expected_failures(args)
    writing, json_file = (
        cli_files.output_file(path, flag) if path else None
        for path, flag in ((args.write_expected_failures, "--write-expected-failures"), (args.json, "--json"))
    )  # checked before the tests run
    all_tests = [*conformance.node_tests(), *conformance.light_model_tests()]
    tests = conformance.select(conformance.node_tests(), args.ops)
    if args.light or conformance.LIGHT_MODEL_GROUP in (args.ops or []):
        tests += conformance.light_model_tests()
    if not tests:
        raise cli_options.UsageError(f"no node tests for ops {args.ops}")
    start = time.perf_counter()
    results = _run(tests)
    print(conformance.summary_table(results))
    print(f"{len(results)} tests in {time.perf_counter() - start:.1f} s")
    labels = {result.test.name: label(result, expected) for result in results}
    _list_results(results, labels, expected, args.verbose)
    unexpected = sum(labels[r.test.name] == "UNEXPECTED" for r in results)
    print(_summary(labels, listing))
    if writing is not None:
        writing.write_text(conformance.updated_expected_failures(writing, results, all_tests))
        print(f"wrote {writing}", file=sys.stderr)
    if json_file is not None:
        json_file.write_text(json.dumps(conformance.results_json(results), indent=1) + "\n")
        print(f"wrote {json_file}", file=sys.stderr)
    if unexpected and writing is None:
        print(f"minimlc: {unexpected} unexpected failure(s)", file=sys.stderr)
        return 1
    return 0


def _run(tests: Sequence[ConformanceTest]) -> list[Result]:
    """Run `tests`, showing which runs on stderr (in place on a terminal, every 100th otherwise)."""
    from minimlc.tools import conformance

    results = []
    interactive = sys.stderr.isatty()
    for index, test in enumerate(tests, 1):
        if interactive:
            print(f"\r\033[K[{index}/{len(tests)}] {test.name}", end="", file=sys.stderr, flush=True)
        elif index % 100 == 1 or test.op == conformance.LIGHT_MODEL_GROUP:
            print(f"[{index}/{len(tests)}] {test.name} ...", file=sys.stderr, flush=True)
        results.append(conformance.run_test(test))
    if interactive:
        print(file=sys.stderr)
    return results


def _list_results(
    results: Sequence[Result], labels: Mapping[str, str], expected: Mapping[str, ExpectedFailure], verbose: bool
) -> None:
    """One line per failure (expected unsupported ones with `verbose` only) and per unexpected pass."""
    from minimlc.tools.conformance import Outcome

    shown = [
        result
        for result in results
        if labels[result.test.name].startswith("UNEXPECTED")
        or result.outcome is Outcome.FAILED
        or (verbose and result.outcome is Outcome.UNSUPPORTED)
    ]
    if shown:
        print()
    for result in shown:
        name, tag = result.test.name, labels[result.test.name]
        entry = expected.get(name)
        if result.outcome.passed:
            assert entry is not None
            message = f"passes ({result.outcome.value}); listed as {entry.kind}: its entry can go"
        else:
            listed = f" (listed as {entry.kind})" if entry is not None and tag == "UNEXPECTED" else ""
            message = f"{result.message}{listed}"
        print(f"{result.outcome.value:<11}  {tag:<15}  {name}: {message}")


def _summary(labels: Mapping[str, str], listing: Path | None) -> str:
    """`1 unexpected failure(s), 40 expected (listed in FILE), 0 unexpected pass(es)`."""
    if listing is None:
        return "no expected-failures list (--expected-failures FILE): every failure is unexpected"
    tags = ("UNEXPECTED", "expected", "UNEXPECTED pass")
    count = {tag: sum(value == tag for value in labels.values()) for tag in tags}
    return (
        f"{count['UNEXPECTED']} unexpected failure(s), {count['expected']} expected (listed in {listing}), "
        f"{count['UNEXPECTED pass']} unexpected pass(es)"
    )
