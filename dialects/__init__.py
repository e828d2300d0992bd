"""minimlc's dialects (`graph`, `te`, `loop`, `llvmx`) and the registry of every dialect our tools load."""

import re
from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.utils.mlir_lexer import MLIRLexer

# xDSL 0.74's string-literal pattern nests a `+` inside a `*` ("(?:[^"...]+|escape)*"), so an unterminated string on
# a long line backtracks exponentially: a stray quote in a .mlir file hung the parser (found by bench/fuzz.py). One
# character per repetition matches the same language in linear time. Every tool that parses our IR loads this module.
MLIRLexer._unescaped_characters_regex = re.compile(  # pyright: ignore[reportPrivateUsage]
    r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
)


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Dialect name -> lazy loader, for minimlc's dialects and the xDSL ones the pipeline uses."""

    def graph() -> Dialect:
        from minimlc.dialects.graph import Graph

        return Graph

    def te() -> Dialect:
        from minimlc.dialects.te import TE

        return TE

    def loop() -> Dialect:
        from minimlc.dialects.loop import Loop

        return Loop

    def llvmx() -> Dialect:
        from minimlc.dialects.llvm_ext import LLVMExt

        return LLVMExt

    from xdsl.dialects import get_all_dialects as xdsl_dialects

    upstream = xdsl_dialects()
    ours: dict[str, Callable[[], Dialect]] = {"graph": graph, "te": te, "loop": loop, "llvmx": llvmx}
    return {**{name: upstream[name] for name in _UPSTREAM}, **ours}


_UPSTREAM = ("builtin", "func", "arith", "math", "memref", "scf", "cf", "llvm", "tensor", "vector", "test")
