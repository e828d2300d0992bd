"""The seed's MLP 784-128-10 written with tensor expressions and scheduled from Python, checked against numpy.

    python examples/te_mlp.py            # builds, runs a FashionMNIST-shaped batch, prints the trace and the error

Each layer is a `te.compute` reduction, its bias and ReLU elementwise computes (TVM's seed code, with `from minimlc
import te` for `from tvm import te`); the schedule tiles each GEMM into a register tile of rows x one vector of
columns, vectorizes the elementwise kernels and runs the row blocks on the thread pool.
"""

from __future__ import annotations

import numpy as np

import minimlc
from minimlc import te
from minimlc.schedule import Schedule

BATCH, IN, HIDDEN, OUT = 64, 784, 128, 10
"""A FashionMNIST-shaped batch: 64 flattened 28x28 images, 10 classes."""


def mlp_function(batch: int = BATCH):
    """relu(x @ w1 + b1) @ w2 + b2 as a te function of (x, w1, b1, w2, b2) returning the logits."""
    x = te.placeholder((batch, IN), name="x")
    w1 = te.placeholder((IN, HIDDEN), name="w1")
    b1 = te.placeholder((HIDDEN,), name="b1")
    w2 = te.placeholder((HIDDEN, OUT), name="w2")
    b2 = te.placeholder((OUT,), name="b2")
    k = te.reduce_axis((0, IN), name="k")
    dense1 = te.compute((batch, HIDDEN), lambda i, j: te.sum(x[i, k] * w1[k, j], axis=k), name="dense1")
    relu1 = te.compute((batch, HIDDEN), lambda i, j: te.max(dense1[i, j] + b1[j], 0.0), name="relu1")
    r = te.reduce_axis((0, HIDDEN), name="r")
    dense2 = te.compute((batch, OUT), lambda i, j: te.sum(relu1[i, r] * w2[r, j], axis=r), name="dense2")
    logits = te.compute((batch, OUT), lambda i, j: dense2[i, j] + b2[j], name="logits")
    return te.create_function([x, w1, b1, w2, b2, logits], name="mlp")


def schedule_mlp(sch: Schedule, lanes: int = 16) -> Schedule:
    """Hand schedule: GEMM register tiles (4 rows x `lanes` columns) with parallel row blocks, vector epilogues."""
    dense1 = sch.get_block("dense1")
    sch.decompose_reduction(dense1)
    i_init, j_init, i, j, k = sch.get_loops(dense1)
    _, j_init_i = sch.split(j_init, factors=[None, lanes])
    sch.vectorize(j_init_i)
    i_o, i_i = sch.split(i, factors=[None, 4])
    j_o, j_i = sch.split(j, factors=[None, lanes])
    sch.reorder(i_o, j_o, k, i_i, j_i)
    sch.unroll(i_i)
    sch.vectorize(j_i)
    sch.cache_write(j_o, accumulate=True)
    sch.parallel(i_o)

    dense2 = sch.get_block("dense2")
    sch.decompose_reduction(dense2)
    _, j_init, i, j, r = sch.get_loops(dense2)
    sch.vectorize(j_init)
    sch.reorder(i, r, j)
    sch.vectorize(j)

    _, j = sch.get_loops("relu1")
    _, j_i = sch.split(j, factors=[None, lanes])
    sch.vectorize(j_i)
    _, j = sch.get_loops("logits")
    sch.vectorize(j)
    return sch


def reference(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0.0) @ w2 + b2


def main() -> float:
    rng = np.random.default_rng(0)
    x = rng.random((BATCH, IN), dtype=np.float32)
    w1 = (rng.standard_normal((IN, HIDDEN)) * np.sqrt(2 / IN)).astype(np.float32)
    b1 = (rng.standard_normal(HIDDEN) * 0.01).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, OUT)) * np.sqrt(2 / HIDDEN)).astype(np.float32)
    b2 = (rng.standard_normal(OUT) * 0.01).astype(np.float32)
    sch = schedule_mlp(Schedule(mlp_function()))
    print(f"trace: {sch.trace}")
    mlp = minimlc.build(sch)
    logits = np.empty((BATCH, OUT), dtype=np.float32)
    mlp(x, w1, b1, w2, b2, logits)
    error = float(np.abs(logits - reference(x, w1, b1, w2, b2)).max())
    print(f"max |minimlc - numpy| = {error:.2e}")
    return error


if __name__ == "__main__":
    assert main() < 1e-3
