"""The seed MLP 784-128-10 built with `minimlc.GraphBuilder`, its layers external functions registered from Python
(`env.linear`, `env.relu`, destination-passing as Relax's `call_dps_packed`), checked against numpy.

    python examples/graph_builder_mlp.py        # prints the graph IR and the largest difference from numpy

A FashionMNIST-shaped batch (64 images of 28x28, flattened) goes through linear, relu, linear; the compiled model
runs the layers by calling back into numpy through function pointers it was bound to when it was loaded.
"""

from __future__ import annotations

import numpy as np

import minimlc
from minimlc import InferenceSession

BATCH, SIZES = 64, (784, 128, 10)


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = x @ w.T + b, written into `out`."""
    np.matmul(x, w.T, out=out)
    out += b


def relu(x: np.ndarray, out: np.ndarray) -> None:
    np.maximum(x, 0, out=out)


def build(weights: dict[str, np.ndarray]) -> minimlc.GraphBuilder:
    bb = minimlc.GraphBuilder()
    x = bb.input("x", (BATCH, SIZES[0]))
    w0, b0 = bb.weight("w0", weights["w0"]), bb.weight("b0", weights["b0"])
    w1, b1 = bb.weight("w1", weights["w1"]), bb.weight("b1", weights["b1"])
    h = bb.call_extern("env.linear", [x, w0, b0], (BATCH, SIZES[1]), np.float32)
    h = bb.call_extern("env.relu", [h], (BATCH, SIZES[1]), np.float32)
    y = bb.call_extern("env.linear", [h, w1, b1], (BATCH, SIZES[2]), np.float32)
    bb.output(y, "logits")
    return bb


def main() -> float:
    """Build, compile and run the MLP; returns the largest absolute difference from numpy."""
    rng = np.random.default_rng(0)
    weights = {
        "w0": (rng.standard_normal((SIZES[1], SIZES[0])) * 0.05).astype(np.float32),
        "b0": (rng.standard_normal(SIZES[1]) * 0.01).astype(np.float32),
        "w1": (rng.standard_normal((SIZES[2], SIZES[1])) * 0.1).astype(np.float32),
        "b1": (rng.standard_normal(SIZES[2]) * 0.01).astype(np.float32),
    }
    minimlc.register_func("env.linear", linear)
    minimlc.register_func("env.relu", relu)
    model = build(weights).finish()
    print(model.module)
    session = InferenceSession.from_imported(model)
    images = rng.random((BATCH, 28, 28), dtype=np.float32).reshape(BATCH, SIZES[0])
    (logits,) = session.run(None, {"x": images})
    hidden = np.maximum(images @ weights["w0"].T + weights["b0"], 0)
    expected = hidden @ weights["w1"].T + weights["b1"]
    difference = float(np.abs(logits - expected).max())
    print(f"logits {logits.shape}, max |minimlc - numpy| = {difference:.2e}")
    return difference


if __name__ == "__main__":
    assert main() < 1e-4
