"""Peak memory of a model whose weights are one big initializer stored as ONNX external data (issue #54).

    python bench/bench_big_weights.py                     # 3 GB of float32 weights read by a Gather of 8 rows
    python bench/bench_big_weights.py --gb 0.5 --op matmul

The model is built in a temporary folder, its weights written a chunk at a time (never whole in memory). Each step
then runs in a fresh process: `minimlc run big.onnx`, `minimlc compile big.onnx -o big.mlc`, `minimlc run big.mlc`
(all without the compile cache) and ONNX Runtime on the same model. The table gives each one's peak RSS (/usr/bin/time's
maximum resident set: mapped file pages count too), its ratio to the weights' size, and its wall time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

COLUMNS = 1024
"""Columns of the weight matrix: [rows, 1024] for Gather, [K, 1024] for MatMul."""
ROWS_PER_CHUNK = 16384
"""Weight rows written at once (64 MiB)."""
ORT_CHILD = """
import sys
import numpy as np
import onnxruntime as ort
session = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
inputs = session.get_inputs()
feeds = {i.name: np.arange(8) if i.type == "tensor(int64)" else np.ones(i.shape, np.float32) for i in inputs}
print([output.shape for output in session.run(None, feeds)])
"""


def build_model(folder: Path, gigabytes: float, op: str) -> tuple[Path, int]:
    """folder/big.onnx reading folder/big.weights (float32 [rows, COLUMNS], `gigabytes` GB) with one `op` node; the
    model's path and the weights' bytes."""
    rows = max(8, int(gigabytes * 1e9) // (4 * COLUMNS))
    with (folder / "big.weights").open("wb") as file:
        for start in range(0, rows, ROWS_PER_CHUNK):
            count = min(ROWS_PER_CHUNK, rows - start)
            chunk = np.arange(start * COLUMNS, (start + count) * COLUMNS, dtype=np.int64) % 251
            file.write((chunk.astype(np.float32) * 0.01).tobytes())
    initializer = onnx.TensorProto(
        name="w",
        data_type=TensorProto.FLOAT,
        dims=[rows, COLUMNS],
        data_location=TensorProto.EXTERNAL,
        external_data=[onnx.StringStringEntryProto(key="location", value="big.weights")],
    )
    if op == "gather":
        node = helper.make_node("Gather", ["w", "ids"], ["y"])
        model_input = helper.make_tensor_value_info("ids", TensorProto.INT64, [8])
        output = helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, COLUMNS])
    else:
        node = helper.make_node("MatMul", ["x", "w"], ["y"])
        model_input = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows])
        output = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, COLUMNS])
    graph = helper.make_graph([node], "big", [model_input], [output], [initializer])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    path = folder / "big.onnx"
    onnx.save(model, path)
    return path, rows * COLUMNS * 4


def peak(command: list[str], log: Path) -> tuple[int, float]:
    """Run `command` (its output to `log`) under /usr/bin/time; its peak RSS in bytes and its wall seconds. Exits if
    it fails. (A child of this process would report this process's peak as its own: fork copies the high-water mark.)"""
    usage = log.with_suffix(".rss")
    start = time.perf_counter()
    with log.open("w") as output:
        result = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(usage), *command], stdout=output, stderr=output)
    if result.returncode != 0:
        raise SystemExit(f"bench_big_weights: {' '.join(command)} failed ({result.returncode}):\n{log.read_text()}")
    return int(usage.read_text().split()[-1]) * 1024, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=3.0, help="weights' size in GB (default 3)")
    parser.add_argument("--op", choices=("gather", "matmul"), default="gather", help="the node reading the weights")
    parser.add_argument("--skip", action="append", default=[], help="a step not to run (e.g. 'onnxruntime')")
    args = parser.parse_args()
    minimlc = str(Path(sys.executable).parent / "minimlc")
    with tempfile.TemporaryDirectory(prefix="bench_big_weights.") as temporary:
        folder = Path(temporary)
        model, weight_bytes = build_model(folder, args.gb, args.op)
        saved = str(folder / "big.mlc")
        steps = {
            "minimlc run big.onnx": [minimlc, "run", str(model), "--repeat", "1", "--no-cache"],
            "minimlc compile big.onnx -o big.mlc": [minimlc, "compile", str(model), "-o", saved, "--no-cache"],
            "minimlc run big.mlc": [minimlc, "run", saved, "--repeat", "1"],
            "onnxruntime": [sys.executable, "-c", ORT_CHILD, str(model)],
        }
        print(f"weights: {weight_bytes / 1e9:.2f} GB float32 ({args.op}), Python {sys.version.split()[0]}")
        print(f"{'step':<38}{'peak RSS (GB)':>14}{'peak/weights':>14}{'seconds':>9}")
        for name, command in steps.items():
            if any(skipped in name for skipped in args.skip):
                continue
            rss, seconds = peak(command, folder / "step.log")
            print(f"{name:<38}{rss / 1e9:>14.3f}{rss / weight_bytes:>14.2f}{seconds:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
