"""Summarise the innermost loops of an x86 assembly file that hold a given instruction: per loop (a label that a later
jump goes back to, with no such label inside), how many of that instruction it runs and how many of its instructions
touch the stack (`rsp`: a spilled register's store or reload). `python inner_loop_spills.py FILE.s vpmaddubsw`:

    innermost loop: 16 vpmaddubsw, 0 stack accesses
"""

import re
import sys
from pathlib import Path

lines = Path(sys.argv[1]).read_text().splitlines()
instruction = sys.argv[2]
labels = {found.group(1): n for n, line in enumerate(lines) if (found := re.match(r"(\.LBB\w+):", line))}
loops = []  # (first line, back-edge line)
for n, line in enumerate(lines):
    jump = re.match(r"\s+j\w+\s+(\.LBB\w+)", line)
    if jump and labels.get(jump.group(1), n) < n:
        loops.append((labels[jump.group(1)], n))
for start, end in loops:
    if any(
        start < inner_start and inner_end <= end
        for inner_start, inner_end in loops
        if (inner_start, inner_end) != (start, end)
    ):
        continue
    body = [line.split("#")[0] for line in lines[start : end + 1]]
    count = sum(re.match(rf"\s+{instruction}\s", line) is not None for line in body)
    if count:
        stack = sum("rsp" in line for line in body)
        print(f"innermost loop: {count} {instruction}, {stack} stack accesses")
