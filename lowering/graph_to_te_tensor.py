"""graph-to-te patterns for tensor ops: shapes, concatenation, slicing, gathering, reductions.

Part of the `graph-to-te` pass (`graph_to_te.py` applies `PATTERNS` with its own); helpers in `te_builder.py`.
"""

from __future__ import annotations

from xdsl.pattern_rewriter import RewritePattern

PATTERNS: list[RewritePattern] = []
