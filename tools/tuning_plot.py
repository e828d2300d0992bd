"""`minimlc tune MODEL --plot curves.png`: the tuning curves, as a grid of small plots.

The first panel is the total weighted latency of all tasks after each trial (`TuningResult.curve`); then one panel
per task (`TuningResult.task_curves`, in the task table's order): the task's best latency after each of its own
trials, a step down wherever a candidate beat the best so far, flat where the search found nothing better. A task
whose curve drops early and stays flat has converged; one still falling wants more trials (`--trials-per-task`).

    drawn = draw_tuning_curves(result.curve, result.task_curves, Path("curves.png"))   # panel title -> points

matplotlib is imported only to draw (the `plot` extra), with its Agg backend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

COLUMNS = 3
TOTAL = "total weighted latency"
"""The first panel's title."""


def draw_tuning_curves(
    curve: Sequence[tuple[int, float]], task_curves: Mapping[str, Sequence[tuple[int, float]]], path: Path
) -> dict[str, np.ndarray]:
    """Draw the total `curve` and each of `task_curves` ((trials, seconds) each) into `path` (its suffix the format;
    written atomically), in milliseconds; per panel title, the (trials, ms) points drawn, read back from the plot."""
    import matplotlib

    from minimlc.tools.cli_files import write_atomically

    matplotlib.use("Agg")
    from matplotlib import pyplot
    from matplotlib.ticker import MaxNLocator

    panels = {TOTAL: curve, **task_curves}
    rows = math.ceil(len(panels) / COLUMNS)
    figure, axes = pyplot.subplots(rows, COLUMNS, figsize=(4 * COLUMNS, 2.8 * rows), squeeze=False)
    drawn: dict[str, np.ndarray] = {}
    for axis, (title, points) in zip(axes.flat, panels.items()):
        (line,) = axis.plot([n for n, _ in points], [seconds * 1e3 for _, seconds in points], marker=".")
        drawn[title] = np.asarray(line.get_xydata())
        axis.set_title(title, fontsize=8)
        axis.set_xlabel("trials" if title == TOTAL else "trials of this task", fontsize=7)
        axis.set_ylabel("ms", fontsize=7)
        axis.tick_params(labelsize=7)
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    for axis in list(axes.flat)[len(panels) :]:
        axis.set_visible(False)
    figure.suptitle("minimlc tune", fontsize=10)
    figure.tight_layout()
    write_atomically(path, lambda temporary: figure.savefig(temporary, format=path.suffix[1:] or "png"))
    pyplot.close(figure)
    return drawn
