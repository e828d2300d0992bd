"""llvmlite JIT: LLVM IR text -> optimised native code in this process.

The target machine is the host's CPU with all its features (AVX2/FMA/AVX-512 where present), and
the module runs LLVM's O3 pipeline (new pass manager) before MCJIT compiles it. External symbols
(`aligned_alloc`, `free`, libm) resolve against the running process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import llvmlite.binding as llvm


@functools.cache
def _initialize_llvm() -> None:
    """Initialise the native target once per process (`llvm.initialize()` raises in 0.50)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def host_target_machine(opt_level: int = 3) -> llvm.TargetMachine:
    """A new target machine for the host CPU name and features."""
    _initialize_llvm()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=opt_level,
        jit=True,
    )


def optimize(module: llvm.ModuleRef, target_machine: llvm.TargetMachine, opt_level: int) -> None:
    """Run LLVM's default `O<opt_level>` module pipeline, tuned for `target_machine`."""
    tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    # As clang does: vectorise from O2 (llvmlite leaves the SLP vectoriser off by default).
    tuning.loop_vectorization = opt_level >= 2
    tuning.slp_vectorization = opt_level >= 2
    builder = llvm.create_pass_builder(target_machine, tuning)
    builder.getModulePassManager().run(module, builder)


@dataclass(frozen=True)
class HostInfo:
    """What schedules need to know about the host CPU."""

    vector_lanes: int
    """f32 lanes of the widest vector registers: 16 with AVX-512, 8 with AVX2, else 4."""
    vector_registers: int
    """Vector registers LLVM may allocate: 32 with AVX-512VL, else 16."""


@functools.cache
def host_info() -> HostInfo:
    """The host's vector width and register count, from LLVM's view of the CPU features."""
    _initialize_llvm()
    features = llvm.get_host_cpu_features()
    lanes = 16 if features.get("avx512f") else 8 if features.get("avx") else 4
    return HostInfo(vector_lanes=lanes, vector_registers=32 if features.get("avx512vl") else 16)


class JitModule:
    """One LLVM module, verified, optimised and compiled to native code in this process.

    The object owns the execution engine: keep it alive as long as any address obtained from
    `function_address` may be called.
    """

    def __init__(self, llvm_ir: str, *, opt_level: int = 3) -> None:
        """Parse and verify `llvm_ir`, optimise it at `opt_level` (0-3), and compile it.

        Raises `RuntimeError` (from llvmlite) if the IR does not parse or verify.
        """
        target_machine = host_target_machine(opt_level)
        module = llvm.parse_assembly(llvm_ir)
        module.triple = target_machine.triple
        module.data_layout = str(target_machine.target_data)
        module.verify()
        if opt_level > 0:
            optimize(module, target_machine, opt_level)
        self._module = module
        self._engine = llvm.create_mcjit_compiler(module, target_machine)
        self._engine.finalize_object()

    def function_address(self, name: str) -> int:
        """The native address of function `name`; raises `KeyError` if there is none."""
        address = self._engine.get_function_address(name)
        if address == 0:
            raise KeyError(f"no function '{name}' in the JIT module")
        return address

    def optimized_ir(self) -> str:
        """The module's LLVM IR after optimisation."""
        return str(self._module)

    def asm(self) -> str:
        """Host assembly for the optimised module (compiled anew; for debugging and tests)."""
        return host_target_machine().emit_assembly(llvm.parse_assembly(self.optimized_ir()))
