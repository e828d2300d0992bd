"""Helper of the tests of target-instruction ops (`llvmx.dot_bf16`, `llvmx.pack_bf16`): a module's LLVM IR by both
paths to it, `convert-to-llvm` and the translation, and the direct emitter."""

from __future__ import annotations

from xdsl.parser import Parser

from minimlc.lowering.llvm.emit_ir import emit_llvm_ir
from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import make_context, run_passes
from minimlc.lowering.target import set_target


def both_llvm_ir(text: str, target: str) -> tuple[str, str]:
    """(the pass path's LLVM IR, the direct emitter's) of the module `text` built for `target`."""
    module = Parser(make_context(), text).parse_module()
    set_target(module, target)
    direct = emit_llvm_ir(module)
    run_passes(module, ["convert-to-llvm", "reconcile-unrealized-casts"])
    return translate_to_llvm_ir(module), direct
