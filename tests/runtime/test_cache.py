"""The compile cache: a second session loads object code (even in a new process), new weights hit, new shapes and
opt levels miss, bad entries are rebuilt with a warning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from test_artifact import conv_model, feed

from minimlc import InferenceSession
from minimlc.driver import cache


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MINIMLC_CACHE", "1")
    monkeypatch.setenv("MINIMLC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.slow
def test_second_process_loads_from_the_cache(cache_dir: Path, tmp_path: Path) -> None:
    onnx.save(conv_model(), tmp_path / "conv.onnx")
    script = f"""
import numpy as np
from minimlc import InferenceSession
session = InferenceSession({str(tmp_path / "conv.onnx")!r})
print(session.stats["cache_hit"])
np.save({str(tmp_path)!r} + "/y%d.npy" % session.stats["cache_hit"], session.run(["y"], {{"x": np.ones((1, 3, 16, 16), np.float32)}})[0])
"""
    for expected_hit in ("0", "1"):
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
        assert result.stdout.strip() == expected_hit
    np.testing.assert_array_equal(np.load(tmp_path / "y1.npy"), np.load(tmp_path / "y0.npy"))
    assert cache_dir.stat().st_mode & 0o777 == 0o700
    assert len(cache.entries()) == 1


def test_new_weights_hit_and_compute_with_the_new_weights(cache_dir: Path) -> None:
    InferenceSession(conv_model())
    model = conv_model()
    model.graph.initializer[0].CopyFrom(
        numpy_helper.from_array(np.full((8, 3, 3, 3), 0.5, np.float32), model.graph.initializer[0].name)
    )
    hit = InferenceSession(model)
    fresh = InferenceSession(model, cache=False)
    assert hit.stats["cache_hit"] == 1 and fresh.stats["cache_hit"] == 0
    np.testing.assert_array_equal(hit.run(None, feed())[0], fresh.run(None, feed())[0])


def test_shape_and_opt_level_miss(cache_dir: Path) -> None:
    InferenceSession(conv_model())
    assert InferenceSession(conv_model(), input_shapes={"x": [1, 3, 16, 16]}).stats["cache_hit"] == 1
    assert InferenceSession(conv_model(12)).stats["cache_hit"] == 0
    assert InferenceSession(conv_model(), opt_level=2).stats["cache_hit"] == 0
    assert len(cache.entries()) == 3
    assert cache.clear() == 3 and cache.entries() == []


def test_a_changed_compiler_misses(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A development checkout whose lowering code changed must not reuse the code the old one made."""
    InferenceSession(conv_model())
    assert InferenceSession(conv_model()).stats["cache_hit"] == 1
    monkeypatch.setattr(cache, "compiler_fingerprint", lambda: "another compiler")
    assert InferenceSession(conv_model()).stats["cache_hit"] == 0


def test_cache_off(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    InferenceSession(conv_model(), cache=False)
    monkeypatch.setenv("MINIMLC_CACHE", "0")
    InferenceSession(conv_model())
    assert cache.entries() == []


def test_corrupt_entry_is_rebuilt_with_a_warning(cache_dir: Path) -> None:
    expected = InferenceSession(conv_model()).run(None, feed())[0]
    (entry,) = cache.entries()
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 1
    entry.write_bytes(data)
    with pytest.warns(RuntimeWarning, match="rebuilding a bad compile-cache entry.*checksum"):
        session = InferenceSession(conv_model())
    assert session.stats["cache_hit"] == 0
    np.testing.assert_array_equal(session.run(None, feed())[0], expected)
    assert InferenceSession(conv_model()).stats["cache_hit"] == 1


@pytest.mark.slow
def test_a_session_served_from_the_cache_saves(cache_dir: Path, tmp_path: Path) -> None:
    """Issue #45: the process that hits the cache loaded the pool from the entry's object code, and saving must write
    that code into the model; a third process loads the model and computes what the first one compiled."""
    onnx.save(conv_model(), tmp_path / "conv.onnx")
    x = tmp_path / "x.npy"
    np.save(x, feed()["x"])
    compile_and_save = f"""
import sys
import numpy as np
from minimlc import InferenceSession
session = InferenceSession({str(tmp_path / "conv.onnx")!r}, num_threads=2)
assert session.stats["cache_hit"] == int(sys.argv[1]), session.stats["cache_hit"]
np.save(sys.argv[2], session.run(["y"], {{"x": np.load({str(x)!r})}})[0])
session.save({str(tmp_path / "conv.mlc")!r})
"""
    load_and_run = f"""
import numpy as np
from minimlc.runtime import load
(y,) = load({str(tmp_path / "conv.mlc")!r}).run(["y"], {{"x": np.load({str(x)!r})}})
np.save({str(tmp_path / "loaded.npy")!r}, y)
"""
    for hit, output in (("0", "compiled.npy"), ("1", "hit.npy")):
        subprocess.run([sys.executable, "-c", compile_and_save, hit, str(tmp_path / output)], check=True)
    subprocess.run([sys.executable, "-c", load_and_run], check=True)
    compiled = np.load(tmp_path / "compiled.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "hit.npy"), compiled)
    np.testing.assert_array_equal(np.load(tmp_path / "loaded.npy"), compiled)
