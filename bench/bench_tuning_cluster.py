"""Tuning throughput on a Ray cluster: candidates a minute timed by one single-core worker and by two.

    python bench/bench_tuning_cluster.py --candidates 40 --rounds 3

Starts a loopback cluster (`examples/loopback_cluster.py`: a Ray head with no CPUs and two `minimlc worker --cores
1`), builds `--candidates` schedules of one MatMul task here, once, then in each round times every one of them on one
core set and on two, in alternating order: the Ray runner's actors (`tuner/ray_runner.MeasureActor`), paired with the
task's default as `minimlc tune` times them, one candidate in flight per actor. Building stays out of the rate: on one
2-core host the builds would take the cores the workers time on, where on a real cluster the tuner's host builds while
the workers time. Needs the distributed extra (`pip install 'minimlc[distributed]'`). Prints one row a round and the
median ratio of two workers' rate to one's.
"""

from __future__ import annotations

import argparse
import logging
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from loopback_cluster import LoopbackCluster

from minimlc.frontend.onnx import import_model
from minimlc.lowering.target import target_from_name
from minimlc.tuner.candidate import Candidate, build_candidate
from minimlc.tuner.measure import Measurer
from minimlc.tuner.ray_runner import MeasureActor, target_resource
from minimlc.tuner.tasks import extract_tasks


def matmul(rows: int, depth: int, columns: int) -> onnx.ModelProto:
    weight = np.random.default_rng(0).standard_normal((depth, columns)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, depth])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, columns])],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def build_candidates(model: onnx.ModelProto, count: int, seed: int) -> list[Candidate]:
    """`count` distinct configs of the model's one task (its default first), built here and paired with the default."""
    (task,) = extract_tasks(import_model(model), target_from_name("host"))
    rng, configs = random.Random(seed), [task.space.default()]
    for _ in range(50 * count):
        if len(configs) == count:
            break
        if (config := task.space.sample(rng)) not in configs:
            configs.append(config)
    spec = Measurer(threads=1, timeout=60.0)
    built = [build_candidate(spec.job(task, config, paired=True, cache="warm")) for config in configs]
    spec.close()
    candidates = [candidate for candidate in built if isinstance(candidate, Candidate)]
    print(f"built {len(candidates)} of {len(configs)} candidates of {task.key}", flush=True)
    return candidates


def candidates_a_minute(ray: Any, resource: str, actors: int, candidates: list[Candidate]) -> float:
    """Every candidate timed on `actors` single-core actors, one in flight each; actor start-up is not counted."""
    remote = ray.remote(MeasureActor).options(resources={resource: 1}, num_cpus=0, max_restarts=0)
    started = [remote.remote(1, 60.0) for _ in range(actors)]
    try:
        ray.get([actor.ready.remote() for actor in started])
        waiting, in_flight, failed = list(candidates), {}, 0
        start = time.perf_counter()
        while waiting or in_flight:
            for actor in started:
                if waiting and actor not in in_flight.values():
                    in_flight[actor.measure.remote(waiting.pop())] = actor
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                in_flight.pop(ref)
                failed += ray.get(ref).latency is None
        elapsed = time.perf_counter() - start
    finally:
        for actor in started:
            ray.kill(actor, no_restart=True)
    if failed:
        raise RuntimeError(f"{failed} of {len(candidates)} candidates failed to time")
    return 60.0 * len(candidates) / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=40, help="schedules timed per measurement (40)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of one worker and two, alternating (3)")
    parser.add_argument("--shape", default="8x64x64", help="the MatMul, ROWSxDEPTHxCOLUMNS (8x64x64)")
    args = parser.parse_args()
    try:
        rows, depth, columns = (int(size) for size in args.shape.split("x"))
    except ValueError:
        parser.error(f"--shape is ROWSxDEPTHxCOLUMNS, not {args.shape!r}")
    if args.candidates < 2 or args.rounds < 1:
        parser.error("--candidates needs at least 2 and --rounds at least 1")
    try:
        import ray
    except ImportError:
        parser.error("this bench needs Ray: pip install 'minimlc[distributed]'")

    candidates = build_candidates(matmul(rows, depth, columns), args.candidates, seed=0)
    folder = Path(tempfile.mkdtemp(prefix="mlcbench"))  # short: Ray's socket paths live under it
    try:
        with LoopbackCluster(folder) as cluster:
            cluster.start_workers("worker0", "worker1")
            ray.init(address=cluster.address, log_to_driver=False, logging_level=logging.ERROR)
            resource = target_resource(cluster.target_key)
            print(f"{len(candidates)} candidates of a {args.shape} MatMul, each paired with the default; "
                  f"candidates a minute:")  # fmt: skip
            print(f"{'round':<7}{'1 worker':>10}{'2 workers':>11}{'ratio':>8}")
            ratios = []
            for round_ in range(args.rounds):
                rates = {}
                for actors in (1, 2) if round_ % 2 == 0 else (2, 1):
                    rates[actors] = candidates_a_minute(ray, resource, actors, candidates)
                ratios.append(rates[2] / rates[1])
                print(f"{round_ + 1:<7}{rates[1]:>10.1f}{rates[2]:>11.1f}{ratios[-1]:>8.2f}", flush=True)
            print(f"median ratio, two workers to one: {statistics.median(ratios):.2f}")
            ray.shutdown()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
