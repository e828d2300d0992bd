"""ONNX conformance: onnx's node tests and light models through minimlc's backend, and the expected-failures list.

The node tests are the ones onnx ships as code (`onnx.backend.test.case.node.collect_testcases()`, built in memory,
one model per test; building them runs every op's numpy reference, ~13 s, so they are kept as a pickle in the cache
directory, `$MINIMLC_CACHE_DIR` or `~/.cache/minimlc`, one per onnx and numpy version, rebuilt when unreadable) and
are compared exactly as onnx's `BackendTest` compares them (`Runner.assert_similar_outputs` with each test's
rtol/atol, 1e-3/1e-7). The light models are the nine CNNs in `onnx/backend/test/data/light` (weights are
ConstantOfShape(0.02)); like onnx's runner, they get `Runner.generate_dummy_data` inputs and are compared with the
shipped `light_*_output_0.pb`. Used by `tests/conformance/` and `minimlc conformance`.

A case passes only for the right reason: native code computed its outputs (`Outcome.NATIVE`), or they are
compile-time constants independent of the inputs' values (`Outcome.CONSTANT`: a Shape, a ConstantOfShape of a shape
input). Outputs computed at import time from input values (folded by `frontend/onnx_fold.py`, not compiled) raise
`FoldedOutputError`: such a case fails, whatever its outputs.
"""

from __future__ import annotations

import enum
import functools
import os
import pickle
import re
import time
import traceback
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import ml_dtypes
import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case.test_case import TestCase
from onnx.backend.test.runner import Runner

from minimlc.backend import onnx_backend as backend
from minimlc.driver.cache import cache_dir
from minimlc.frontend.onnx_errors import (
    ModelImportError,
    UnsupportedFeatureError,
    UnsupportedOpsError,
    UnsupportedTypeError,
)
from minimlc.frontend.onnx_operators import CONSTANT_OPERANDS

LIGHT_MODELS_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
LIGHT_MODEL_GROUP = "light_models"
"""The `op` (table row, expected-failures group, `--ops` name) of the light-model tests."""
LIGHT_RTOL, LIGHT_ATOL = 1e-3, 1e-7
"""onnx's tolerances for its light-model tests (`data/real/test_*/data.json`)."""


@dataclass(frozen=True)
class ConformanceTest:
    """One onnx conformance test: its name, the op it tests (or the light-model group) and how to run it."""

    name: str
    op: str
    run: Callable[[], Outcome] = field(default=lambda: _no_runner(), compare=False, repr=False)
    """Runs the test through minimlc's backend; returns how it passed (`how_it_passed`), raises on failure
    (NotImplementedError: unsupported)."""


def _no_runner() -> Outcome:
    raise NotImplementedError("this test has no runner")


class Outcome(enum.Enum):
    NATIVE = "native"
    """Passed: native code computed at least one output, and every other output is an independent constant."""
    CONSTANT = "constant"
    """Passed: every output is a compile-time constant independent of the inputs' values."""
    FAILED = "failed"
    UNSUPPORTED = "unsupported"

    @property
    def passed(self) -> bool:
        return self in (Outcome.NATIVE, Outcome.CONSTANT)


@dataclass(frozen=True)
class Result:
    test: ConformanceTest
    outcome: Outcome
    message: str
    seconds: float
    kind: str = ""
    """`failure_kind` of what the test raised; "" when it passed."""


class OutputMismatch(AssertionError):
    """minimlc's outputs differ from the expected ones beyond the test's tolerances."""


class FoldedOutputError(AssertionError):
    """Outputs came from import-time folding of input values, not from native code: the case does not count."""


FAILURE_KINDS: dict[str, type[BaseException]] = {
    "unsupported-op": UnsupportedOpsError,
    "unsupported-type": UnsupportedTypeError,
    "unsupported-feature": UnsupportedFeatureError,
    "import-error": ModelImportError,
    "mismatch": OutputMismatch,
    "folded": FoldedOutputError,
}
"""Kinds of failure an expected-failures entry may declare, the most specific first; any other exception's kind is
its class name (`NotImplementedError`, `DiagnosticException`, ...)."""


def failure_kind(error: BaseException) -> str:
    """The kind of failure `error` is: the first `FAILURE_KINDS` entry it is an instance of, else its class name."""
    return next((kind for kind, cls in FAILURE_KINDS.items() if isinstance(error, cls)), type(error).__name__)


def assert_similar_outputs(expected: list[np.ndarray], actual: object, rtol: float, atol: float) -> None:
    """onnx's `Runner.assert_similar_outputs`, raising `OutputMismatch` when the outputs differ; a sequence output's
    elements are compared as outputs of their own (onnx's runner would compare their rows, and fails on scalars)."""
    try:
        if any(isinstance(output, list) for output in expected):
            np.testing.assert_equal(len(list(actual)), len(expected))  # pyright: ignore[reportArgumentType]
            for want, got in zip(expected, actual):  # pyright: ignore[reportArgumentType]
                assert isinstance(want, list) == isinstance(got, list), f"expected {type(want)}, got {type(got)}"
                pairs = (want, got) if isinstance(want, list) else ([want], [got])
                np.testing.assert_equal(len(pairs[1]), len(pairs[0]))
                Runner.assert_similar_outputs(pairs[0], pairs[1], rtol=rtol, atol=atol)
            return
        Runner.assert_similar_outputs(expected, actual, rtol=rtol, atol=atol)
    except AssertionError as error:
        raise OutputMismatch(str(error)) from error


@functools.cache
def node_tests() -> tuple[ConformanceTest, ...]:
    """Every onnx node test (the `_expanded` function-body variants too), sorted by name."""
    cases = node_cases()
    ops = {case.name: _op_type(case) for case in cases if "_expanded" not in case.name}
    tests = [
        ConformanceTest(case.name, ops[case.name.split("_expanded")[0]], functools.partial(_run_node_case, case))
        for case in cases
    ]
    return tuple(sorted(tests, key=lambda test: test.name))


def node_tests_cache() -> Path:
    """Where `node_tests` keeps onnx's generated cases for this onnx and numpy."""
    return cache_dir() / "onnx-node-tests" / f"onnx-{onnx.__version__}-numpy-{np.__version__}.pickle"


def node_cases() -> list[TestCase]:
    """onnx's node test cases: loaded from `node_tests_cache()`, else generated and saved there."""
    path = node_tests_cache()
    try:
        with path.open("rb") as file:
            cases = pickle.load(file)
        if isinstance(cases, list) and all(isinstance(case, TestCase) for case in cases):
            return cases
        raise ValueError("not a list of onnx test cases")
    except FileNotFoundError:
        pass
    except Exception as error:  # any unreadable file is regenerated
        message = f"minimlc: rebuilding onnx's node tests: {path} is unreadable ({error})"
        warnings.warn(message, RuntimeWarning, stacklevel=3)
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        # onnx computes some expected outputs with numpy on purpose-made overflowing or zero data.
        warnings.simplefilter("ignore", RuntimeWarning)
        cases = collect_testcases()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with partial.open("wb") as file:
            pickle.dump(cases, file, protocol=pickle.HIGHEST_PROTOCOL)
        partial.replace(path)  # concurrent writers never leave half a file
    except OSError:
        pass  # an unwritable cache directory only costs the next run the generation
    return cases


def _op_type(case: TestCase) -> str:
    assert case.model is not None
    return case.model.graph.node[0].op_type


def _run_node_case(case: TestCase) -> Outcome:
    assert case.model is not None
    assert case.data_sets is not None
    rep = backend.prepare(case.model)
    runs: list[tuple[list[np.ndarray], Sequence[np.ndarray]]] = []
    for inputs, expected in case.data_sets:
        feeds = [_as_array(value) for value in inputs]
        outputs = rep.run(feeds)
        wanted = [_as_array(value) for value in expected]
        undefined = _undefined_casts(case.model, feeds, wanted)
        compared = list(outputs)
        if undefined is not None:  # compared where ONNX defines the result only
            compared, wanted = [_zeroed(compared[0], undefined)], [_zeroed(wanted[0], undefined)]
        assert_similar_outputs(wanted, compared, rtol=case.rtol, atol=case.atol)
        runs.append((feeds, outputs))
    return how_it_passed(rep, runs)


def _zeroed(array: np.ndarray, where: np.ndarray) -> np.ndarray:
    copy = np.array(array, copy=True)
    copy[where] = 0
    return copy


def _undefined_casts(model: onnx.ModelProto, feeds: list[np.ndarray], expected: list[np.ndarray]) -> np.ndarray | None:
    """Where a Cast (or CastLike) from floating point to an integer type has no defined result: ONNX leaves a value
    out of the target's range (NaN and infinities too) undefined, and onnx's generator computes its expected output
    with numpy, whose answer there depends on the CPU (float -> int4 -9: 7 on Zen 5 and Xeon, 0 on Zen 4). None where
    the case is no such cast."""
    if model.graph.node[0].op_type not in ("Cast", "CastLike") or len(expected) != 1:
        return None
    source, target = feeds[0], expected[0]
    try:
        ml_dtypes.finfo(source.dtype)
        info = ml_dtypes.iinfo(target.dtype)
    except ValueError:
        return None  # not from floating point, or not to an integer type
    if source.shape != target.shape:
        return None
    with np.errstate(invalid="ignore"):
        whole = np.trunc(source.astype(np.float64))
        return ~(np.isfinite(whole) & (whole >= int(info.min)) & (whole <= int(info.max)))


def how_it_passed(
    rep: backend.MinimlcBackendRep, runs: Sequence[tuple[list[np.ndarray], Sequence[np.ndarray]]]
) -> Outcome:
    """How a case whose `runs` (feeds in input order, outputs) matched the expected outputs passed.

    `NATIVE` if a session compiled native code (its kernels compute outputs), `CONSTANT` if none did. Either way, the
    outputs that are compile-time constants must be independent of the inputs' values: an input bound and not fed at
    run time is read only as a `CONSTANT_OPERANDS` operand (a shape, axes, Dropout's ratio), and rerunning with every
    float input fed at run time replaced by other random values gives the same constants. Raises `FoldedOutputError`
    otherwise.
    """
    bound = set(rep.bound_inputs)
    graph = rep.model.graph
    only_bound = bound - set(rep.fed_inputs)
    as_data = sorted(
        f"'{name}' ({node.op_type} input {position})"
        for node in graph.node
        for position, name in enumerate(node.input)
        if name in only_bound and position not in CONSTANT_OPERANDS.get(node.op_type, ())
    ) + sorted(f"'{vi.name}' (a graph output)" for vi in graph.output if vi.name in only_bound)
    if as_data:
        raise FoldedOutputError(f"inputs bound as constants but read as data: {', '.join(as_data)}")
    sessions = rep.sessions.values()
    constant = {name for session in sessions for name in session.constant_output_names}
    names = [vi.name for vi in graph.output]
    inputs = [vi.name for vi in graph.input if vi.name not in {tensor.name for tensor in graph.initializer}]
    rng = np.random.default_rng(0)
    for feeds, outputs in runs:
        other = [feed if name in bound else _other_floats(feed, rng) for name, feed in zip(inputs, feeds)]
        for name, before, after in zip(names, outputs, rep.run(other)):
            # a sequence output's elements are outputs `name[i]` of their own
            pairs = zip(before, after) if isinstance(before, list) else [(before, after)]
            items = [f"{name}[{i}]" for i in range(len(before))] if isinstance(before, list) else [name]
            for item, (was, now) in zip(items, pairs):
                if item in constant and not np.array_equal(was, now, equal_nan=was.dtype.kind in "fc"):
                    raise FoldedOutputError(f"constant output '{item}' changes with the values of the float inputs")
    return Outcome.NATIVE if any(session.stats["kernels"] for session in sessions) else Outcome.CONSTANT


def _other_floats(feed: object, rng: np.random.Generator) -> object:
    """`feed` with random values in place of its float32 ones (in each element of a sequence)."""
    if isinstance(feed, list):
        return [_other_floats(item, rng) for item in feed]
    if isinstance(feed, np.ndarray) and feed.dtype == np.float32:
        return rng.standard_normal(feed.shape).astype(np.float32)
    return feed


def _as_array(value: object) -> np.ndarray:
    """A test's input or output as an array (a sequence as a list of them, an empty optional as None)."""
    if isinstance(value, list) or value is None:
        return [_as_array(item) for item in value] if value is not None else None  # pyright: ignore
    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else np.asarray(value)


def light_model_paths() -> list[Path]:
    """The light models' .onnx files, sorted."""
    return sorted(LIGHT_MODELS_DIR.glob("light_*.onnx"))


def light_model_tests() -> tuple[ConformanceTest, ...]:
    """One test per light model, named after the file (`light_resnet50`)."""
    return tuple(
        ConformanceTest(path.stem, LIGHT_MODEL_GROUP, functools.partial(run_light_model, path))
        for path in light_model_paths()
    )


def light_model_feeds(model: onnx.ModelProto) -> list[np.ndarray]:
    """The inputs onnx's runner gives a light model: `arange(n).reshape(shape) / n` per input, in order."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    return [
        Runner.generate_dummy_data(vi, seed=0, random=False) for vi in model.graph.input if vi.name not in initializers
    ]


def run_light_model(path: Path) -> Outcome:
    """Compile and run one light model, compare with its shipped expected output at onnx's tolerances."""
    model = onnx.load(path)
    rep = backend.prepare(model)
    feeds = light_model_feeds(model)
    outputs = rep.run(feeds)
    assert_similar_outputs(light_model_outputs(path), outputs, rtol=LIGHT_RTOL, atol=LIGHT_ATOL)
    return how_it_passed(rep, [(feeds, outputs)])


def light_model_outputs(path: Path) -> list[np.ndarray]:
    """The expected outputs shipped next to a light model (`<stem>_output_<i>.pb`), in output order."""
    count = len(onnx.load(path, load_external_data=False).graph.output)
    return [numpy_helper.to_array(onnx.load_tensor(path.with_name(f"{path.stem}_output_{i}.pb"))) for i in range(count)]


def select(tests: Iterable[ConformanceTest], ops: Collection[str] | None) -> list[ConformanceTest]:
    """The tests of the given ops (all when None); the light models are the op `light_models`."""
    return [test for test in tests if ops is None or test.op in ops]


def run_test(test: ConformanceTest) -> Result:
    """Run one test and classify it: NotImplementedError is unsupported, any other exception a failure."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            outcome = test.run()
    except NotImplementedError as error:
        return Result(test, Outcome.UNSUPPORTED, _first_line(error), time.perf_counter() - start, failure_kind(error))
    except Exception as error:  # a conformance run reports every failure and goes on
        message = _first_line(error) or traceback.format_exception_only(error)[-1].strip()
        seconds = time.perf_counter() - start
        return Result(test, Outcome.FAILED, f"{type(error).__name__}: {message}", seconds, failure_kind(error))
    return Result(test, outcome, "", time.perf_counter() - start)


def _first_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[0].strip() if lines else ""


def summary_table(results: Iterable[Result]) -> str:
    """A table by op (sorted): passed natively, passed as constants, failed, unsupported; then the totals."""
    counts: dict[str, dict[Outcome, int]] = {}
    for result in results:
        counts.setdefault(result.test.op, dict.fromkeys(Outcome, 0))[result.outcome] += 1
    totals = {outcome: sum(row[outcome] for row in counts.values()) for outcome in Outcome}
    width = max([len("total"), len("op"), *map(len, counts)])
    widths = {outcome: max(len(outcome.value), 6) for outcome in Outcome}

    def line(label: str, row: Mapping[Outcome, object]) -> str:
        return "  ".join([f"{label:<{width}}", *(f"{row[outcome]!s:>{widths[outcome]}}" for outcome in Outcome)])

    header = line("op", {outcome: outcome.value for outcome in Outcome})
    rows = [line(op, row) for op, row in sorted(counts.items())]
    return "\n".join([header, "-" * len(header), *rows, "-" * len(header), line("total", totals)])


def results_json(results: Iterable[Result]) -> list[dict[str, object]]:
    """Each case's classification: name, op, outcome (native, constant, failed, unsupported), kind, message."""
    return [
        {"name": r.test.name, "op": r.test.op, "outcome": r.outcome.value, "kind": r.kind, "message": r.message}
        for r in results
    ]


class ExpectedFailure(NamedTuple):
    """An expected-failures entry: the `failure_kind` the test must fail with, and a comment ("" if none)."""

    kind: str
    comment: str = ""


_ENTRY = re.compile(r"^\s*([^#\s]+)(?:\s+([^#\s]+))?\s*(?:#\s*(.*))?$")


def read_expected_failures(path: Path) -> dict[str, ExpectedFailure]:
    """The test names listed in an expected-failures file, each with its expected failure.

    One `name kind` per line; `#` starts a comment, on a line of its own or after the kind. Raises `ValueError` for an
    entry without a kind.
    """
    entries: dict[str, ExpectedFailure] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = _ENTRY.match(line)
        if not match:
            continue
        name, kind, comment = match.groups()
        if kind is None:
            raise ValueError(f"{path}:{number}: '{name}' names no failure kind (one of {', '.join(FAILURE_KINDS)})")
        entries[name] = ExpectedFailure(kind, (comment or "").strip())
    return entries


def expected_failures_text(failing: Mapping[ConformanceTest, ExpectedFailure], header: str) -> str:
    """The expected-failures file for the `failing` tests: grouped by op, light models last."""
    groups: dict[str, list[ConformanceTest]] = {}
    for test in failing:
        groups.setdefault(test.op, []).append(test)
    order = sorted(groups, key=lambda op: (op == LIGHT_MODEL_GROUP, op))
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for op in order:
        lines += ["", f"# {op}"]
        for test in sorted(groups[op], key=lambda test: test.name):
            kind, comment = failing[test]
            lines.append(f"{test.name}  {kind}  # {comment}" if comment else f"{test.name}  {kind}")
    return "\n".join(lines) + "\n"


EXPECTED_FAILURES_HEADER = """\
Conformance tests minimlc is expected to fail (tests/conformance/test_onnx_node_tests.py, test_onnx_light_models.py),
each with the kind of failure it must fail with. A listed test that fails with its kind is an xfail; one that fails
otherwise (a refusal that became a wrong answer or a crash) or passes fails the run (strict), and so does an unlisted
test that fails. Regenerate this file (about 1.5 minutes for the node tests, more for the light models) with
    minimlc conformance --light --write-expected-failures tools/conformance_expected_failures.txt
or update the entries of some ops only with --ops Conv,Relu (light_models: the light CNNs).
One `test_name  kind` per line, grouped by op; '#' starts a comment. Kinds (tools/conformance.py FAILURE_KINDS):
    unsupported-op       UnsupportedOpsError: an op minimlc has no converter for
    unsupported-type     UnsupportedTypeError: a graph input or output, or an output computed at run time, of a type
                         minimlc lacks (string, float8e8m0, a sequence of strings, ...)
    unsupported-feature  UnsupportedFeatureError: an attribute, attribute value or cast minimlc lacks
    import-error         ModelImportError: minimlc rejects the model as invalid
    mismatch             OutputMismatch: outputs differ from the expected ones beyond the test's tolerances
    folded               FoldedOutputError: outputs computed at import time from input values, not by native code
    any other word       the class name of the exception the run raises (a crash)
Tests that fail, rather than being refused with a NotImplementedError, carry the message. Out of scope on purpose:
Dropout in training mode with a ratio above 0 and Bernoulli (their expected outputs come from numpy's random generator,
whose stream ONNX Runtime does not share either), strings, float8e8m0 (sequences and optionals of tensors are
supported: `backend/containers.py`). test_dft_inverse* are listed mismatches: their expected outputs carry
numpy's float32 FFT round-off (2e-7 where the exact value is 0, above atol 1e-7), which minimlc's DFT table and ONNX
Runtime do not reproduce."""


def _shortened(message: str, limit: int = 160) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."


def updated_expected_failures(path: Path, results: Iterable[Result], all_tests: Iterable[ConformanceTest]) -> str:
    """The expected-failures file after a run: the run's tests listed iff they did not pass, other entries kept."""
    results = list(results)
    ran = {result.test.name for result in results}
    by_name = {test.name: test for test in all_tests}
    kept = read_expected_failures(path) if path.exists() else {}
    failing = {by_name[name]: entry for name, entry in kept.items() if name in by_name and name not in ran}
    for result in results:
        if result.outcome is Outcome.FAILED:
            failing[result.test] = ExpectedFailure(result.kind, _shortened(result.message))
        elif result.outcome is Outcome.UNSUPPORTED:
            failing[result.test] = ExpectedFailure(result.kind)
    return expected_failures_text(failing, EXPECTED_FAILURES_HEADER)
