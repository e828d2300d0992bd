"""llvmlite JIT: LLVM IR text -> optimised native code in this process.

The target machine is the module's target (`minimlc.lowering.target`): by default the host's CPU with all its
features (AVX2/FMA/AVX-512 where present), or a named CPU such as `x86-64-v3`, whose code runs here if the host has
its features. The module runs LLVM's optimisation pipeline (new pass manager; O2 for a model's code,
`pipeline.llvm_opt_level`) before MCJIT compiles it. External symbols (`aligned_alloc`, `free`, libm) resolve
against the running process.

`JitModule.object_code` is the object file MCJIT compiled (caught with its object cache, so nothing is compiled
twice); `ObjectModule` loads object files (such a file, or the partitions `runtime.codegen` compiled in parallel)
into a new engine, with no IR, no optimisation and no code generation: compiled models, saved models and the
compile cache.
"""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.binding as llvm

from minimlc.lowering import target as targets
from minimlc.lowering.abi import packed_name
from minimlc.lowering.target import Target, target_from_name


def target_machine(target: Target | None = None, opt_level: int = 3) -> llvm.TargetMachine:
    """A new LLVM target machine for `target` (default: the host), its triple, CPU name and features."""
    return targets.target_machine(target or target_from_name("host"), opt=opt_level, jit=True)


def optimize(module: llvm.ModuleRef, target_machine: llvm.TargetMachine, opt_level: int) -> None:
    """Run LLVM's default `O<opt_level>` module pipeline, tuned for `target_machine`."""
    tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    # As clang does: vectorise from O2 (llvmlite leaves the SLP vectoriser off by default).
    tuning.loop_vectorization = opt_level >= 2
    tuning.slp_vectorization = opt_level >= 2
    builder = llvm.create_pass_builder(target_machine, tuning)
    builder.getModulePassManager().run(module, builder)


def optimized_module(
    llvm_ir: str, machine: llvm.TargetMachine, opt_level: int = 3, *, sealed: bool = False
) -> llvm.ModuleRef:
    """Parse and verify `llvm_ir` for `machine` (its triple and data layout) and optimise it at `opt_level`, its
    entries first `seal_entries`-ed if `sealed` (a model's code); raises `RuntimeError` (from llvmlite) if the IR
    does not parse or verify."""
    module = llvm.parse_assembly(llvm_ir)
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    module.verify()
    if sealed:
        seal_entries(module)
    if opt_level > 0:
        optimize(module, machine, opt_level)
    return module


def seal_entries(module: llvm.ModuleRef) -> None:
    """Make `module`'s code what a model's runtime calls: its entries only in their packed form (`@main_packed`).
    Each entry's unpacked wrapper defined here becomes internal, so LLVM drops it, and the functions the packed
    entries call become `noinline`, compiled once where they are defined and not again at every call: the 12-layer
    BERT encoder's `@main_init` makes 72 calls to 3 weight-packing kernels, each of which LLVM inlined, vectorised and
    unrolled anew (39,000 instructions after O3 instead of 8,400; 2.9 s of LLVM instead of 0.8)."""
    defined = {function.name: function for function in module.functions if not function.is_declaration}
    wrappers = {packed_name(name): function for name, function in defined.items() if packed_name(name) in defined}
    callees: set[str] = set()
    for packed, wrapper in wrappers.items():
        wrapper.linkage = llvm.Linkage.internal
        for block in defined[packed].blocks:
            for instruction in block.instructions:
                if instruction.opcode == "call":
                    callees.add(list(instruction.operands)[-1].name)
    for name in callees:
        if name in defined:
            defined[name].add_function_attribute("noinline")


class JitModule:
    """One LLVM module, verified, optimised and compiled to native code in this process.

    The object owns the execution engine: keep it alive as long as any address obtained from
    `function_address` may be called.
    """

    def __init__(self, llvm_ir: str, *, opt_level: int = 3, target: Target | None = None) -> None:
        """Parse and verify `llvm_ir`, optimise it at `opt_level` (0-3) for `target` (default: the host), and
        compile it.

        Raises `RuntimeError` (from llvmlite) if the IR does not parse or verify, ValueError if the host cannot run
        code built for `target`.
        """
        self.target = target or target_from_name("host")
        self.target.check_runs_on_host()
        machine = target_machine(self.target, opt_level)
        module = optimized_module(llvm_ir, machine, opt_level)
        self._module = module
        self._engine = llvm.create_mcjit_compiler(module, machine)
        compiled: list[bytes] = []
        self._engine.set_object_cache(lambda _module, buffer: compiled.append(bytes(buffer)))
        self._engine.finalize_object()
        self.object_code = compiled[0]
        """The native object file of the optimised module (for `ObjectModule`)."""
        self.object_files = (self.object_code,)

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
        """Assembly for the optimised module on its target (compiled anew; for debugging and tests)."""
        return target_machine(self.target).emit_assembly(llvm.parse_assembly(self.optimized_ir()))


class ObjectModule:
    """Native code loaded from object files (`JitModule.object_code`, or the partitions `runtime.codegen` compiled)
    into one engine, which links their calls to each other; `function_address` as `JitModule`'s.

    External symbols resolve as they do for `JitModule` (register the pool's first where the code calls it).
    """

    def __init__(self, object_files: Sequence[bytes], target: Target) -> None:
        """Load `object_files`, built for `target`; ValueError if the host cannot run code built for it."""
        target.check_runs_on_host()
        self.target = target
        self.object_files = tuple(object_files)
        machine = target_machine(target)
        empty = llvm.parse_assembly("")
        empty.triple = machine.triple
        self._engine = llvm.create_mcjit_compiler(empty, machine)
        for object_code in self.object_files:
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
        self._engine.finalize_object()

    def function_address(self, name: str) -> int:
        """The native address of function `name`; raises `KeyError` if there is none."""
        address = self._engine.get_function_address(name)
        if address == 0:
            raise KeyError(f"no function '{name}' in the loaded object code")
        return address
