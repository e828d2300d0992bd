"""The tuning database as an append-only log: a record cut short (a tuning killed while appending it) is skipped with
a warning, the next record starts on a line of its own, and a corrupt line stays an error."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from minimlc.lowering.strategy.tuning_db import (
    Record,
    TornRecordWarning,
    TuningDatabase,
    TuningDatabaseError,
    cut_short,
)

RECORD = Record("k", "cpu", "gemm", "gemm_0", 10, {"mr": 1, "order": "k,i,j"}, 1e-6, "a \"quoted\" error")
WHOLE = RECORD.to_json()


def test_every_prefix_of_a_record_is_cut_short() -> None:
    literals = '{"a": [true, false, null, -2.5e-07, 1E+10, 0.5], "b": "\\u00e9\\"\\\\", "c": {}}'
    for line in (WHOLE, Record("k", "cpu", "gemm", "gemm_0", 10, {"mr": 1}, None, "caf\u00e9").to_json(), literals):
        assert not cut_short(line)
        assert [length for length in range(1, len(line)) if not cut_short(line[:length])] == []


@pytest.mark.parametrize("line", ["{not json", '{"key": 1,,}', "hello", "[1, 2", '{"a": 1} {"b"', '{"a": tx'])
def test_a_corrupt_line_is_not_cut_short(line: str) -> None:
    assert not cut_short(line)


def test_a_last_record_cut_short_is_skipped_and_the_next_starts_a_line(tmp_path: Path) -> None:
    path = tmp_path / "tuning.jsonl"
    path.write_text(f"{WHOLE}\n{WHOLE[:40]}")  # killed while appending the second record
    with pytest.warns(TornRecordWarning, match=rf"^{re.escape(str(path))}:2: skipped a record cut short"):
        db = TuningDatabase(path)
    assert db.records == [RECORD]
    second = replace(RECORD, config={"mr": 2, "order": "k,i,j"})
    db.add(second)
    assert path.read_text().splitlines() == [WHOLE, WHOLE[:40], second.to_json()]
    assert TuningDatabase(path).records == [RECORD, second]  # still skipped, warned about once a process


def test_a_corrupt_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "tuning.jsonl"
    path.write_text(f"{WHOLE}\n{{\"key\": 1,,}}\n{WHOLE}\n")
    with pytest.raises(TuningDatabaseError, match=rf"{re.escape(str(path))}:2: not a JSON line"):
        TuningDatabase(path)
    path.write_text(f"{WHOLE}\nhello")  # last, but not a record cut short
    with pytest.raises(TuningDatabaseError, match=":2: not a JSON line"):
        TuningDatabase(path)
