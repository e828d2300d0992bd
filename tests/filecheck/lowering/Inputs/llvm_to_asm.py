"""Print the assembly LLVM makes of an LLVM IR file for a target (at the LLVM level of minimlc's O3, as the JIT and
`minimlc build` optimise it):
`python llvm_to_asm.py FILE.ll 'aarch64-linux-gnu -mcpu=neoverse-n1'`. The system's llc is older than the IR."""

import sys
from pathlib import Path

from minimlc.lowering.pipeline import llvm_opt_level
from minimlc.lowering.target import target_from_name, target_machine
from minimlc.runtime.jit import optimized_module

machine = target_machine(target_from_name(sys.argv[2]))
print(machine.emit_assembly(optimized_module(Path(sys.argv[1]).read_text(), machine, llvm_opt_level(3))))
