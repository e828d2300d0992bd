"""The allocation guard as LLVM IR: model code never runs on after an allocation failed.

Model code allocates its intermediates (the arena, or at O0 one buffer per intermediate) with `aligned_alloc` at the
top level of its entry, and has no path that could return a failure. So the runtime links those calls to
`minimlc_checked_alloc` instead (the JIT with `llvmlite.binding.add_symbol`, `runtime.threadpool.register_symbols`;
an exported library with `-Wl,--wrap=aligned_alloc`) and calls the entry through `minimlc_guarded_call`:

    i64 minimlc_guarded_call(ptr entry, ptr args)   calls entry(args); 0 when it returned, else the bytes that a
                                                    `minimlc_checked_alloc` of the call could not allocate
    ptr minimlc_checked_alloc(i64 alignment, i64 size)
                                                    `aligned_alloc`; when that fails inside a guarded call, it does
                                                    not return: it jumps back to that call's `minimlc_guarded_call`

The jump is a `_longjmp` to the `_setjmp` of the innermost guarded call of the thread (a pthread key holds it, so a
guarded call made inside another, by an external function that runs a second model, restores the outer one). It
skips only the frames of model code, whose allocations all happen at the top level of its entry, between kernel
calls: never inside a parallel loop, so the thread pool is idle, and no lock is held. What the entry allocated
before the failing allocation (at O0, the earlier intermediates) is not freed. Outside a guarded call (on a pool
worker, or in code not called through the guard) a failed allocation returns NULL, as `aligned_alloc` does. The
functions are built into the thread pool's module (`threadpool_ir.build_pool_module`), so they come with the pool
code everywhere it goes: compiled or loaded in this process, saved with a model, linked into a library.
"""

from __future__ import annotations

from llvmlite import ir

GUARDED_CALL = "minimlc_guarded_call"
CHECKED_ALLOC = "minimlc_checked_alloc"
GUARDED_SYMBOL = "aligned_alloc"
"""The allocation function of model code (`lowering/llvm/convert_to_llvm.py`) that `CHECKED_ALLOC` replaces."""

I32, I64 = ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
_JMP_BUF_BYTES = 512
"""Room for the C library's `jmp_buf` (200 bytes on x86-64 glibc, 312 on AArch64)."""
FRAME = ir.LiteralStructType([I64, PTR, ir.ArrayType(ir.IntType(8), _JMP_BUF_BYTES)])
"""A guarded call's frame, on its stack: the bytes that failed (0 while none), the thread's previous frame, and the
`jmp_buf` (at offset 16: aligned as `jmp_buf` wants)."""


def add_alloc_guard(module: ir.Module) -> None:
    """Define `minimlc_guarded_call` and `minimlc_checked_alloc` (and their internal helpers) in `module`."""
    declare = _Declarations(module)
    make_key = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "minimlc_guard_make_key")
    make_key.linkage = "internal"
    b = ir.IRBuilder(make_key.append_basic_block("entry"))
    b.call(declare.pthread_key_create, [declare.key, ir.Constant(PTR, None)])
    b.ret_void()
    _build_guarded_call(module, declare, make_key)
    _build_checked_alloc(module, declare, make_key)


class _Declarations:
    """The C library functions and the globals (the frame's pthread key, made once) the guard uses."""

    def __init__(self, module: ir.Module) -> None:
        def declare(name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
            return ir.Function(module, ir.FunctionType(ret, args), name)

        def internal(name: str) -> ir.GlobalVariable:
            variable = ir.GlobalVariable(module, I32, name)
            variable.linkage, variable.initializer = "internal", ir.Constant(I32, 0)
            return variable

        self.once, self.key = internal("minimlc_guard_once"), internal("minimlc_guard_key")  # pthread_once_t is int
        self.pthread_once = declare("pthread_once", I32, [PTR, PTR])
        self.pthread_key_create = declare("pthread_key_create", I32, [PTR, PTR])
        self.pthread_getspecific = declare("pthread_getspecific", PTR, [I32])
        self.pthread_setspecific = declare("pthread_setspecific", I32, [I32, PTR])
        self.posix_memalign = declare("posix_memalign", I32, [PTR, I64, I64])
        self.setjmp = declare("_setjmp", I32, [PTR])
        self.setjmp.attributes.add("returns_twice")
        self.longjmp = declare("_longjmp", ir.VoidType(), [PTR, I32])
        self.longjmp.attributes.add("noreturn")

    def frame_key(self, b: ir.IRBuilder, make_key: ir.Function) -> ir.Value:
        """The pthread key of the threads' innermost frames, made on first use."""
        b.call(self.pthread_once, [self.once, make_key])
        return b.load(self.key, typ=I32)


def _member(b: ir.IRBuilder, frame: ir.Value, index: int) -> ir.Value:
    """A member of the frame at `frame`: the alloca's (llvmlite types it) or an opaque pointer to one."""
    etype = FRAME if frame.type.is_opaque else None
    return b.gep(frame, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True, source_etype=etype)


def _build_guarded_call(module: ir.Module, declare: _Declarations, make_key: ir.Function) -> None:
    entry_type = ir.FunctionType(ir.VoidType(), [PTR])
    function = ir.Function(module, ir.FunctionType(I64, [entry_type.as_pointer(), PTR]), GUARDED_CALL)
    entry, args = function.args
    b = ir.IRBuilder(function.append_basic_block("entry"))
    frame = b.alloca(FRAME)
    frame.align = 16
    key = declare.frame_key(b, make_key)
    b.store(b.call(declare.pthread_getspecific, [key]), _member(b, frame, 1))
    b.store(ir.Constant(I64, 0), _member(b, frame, 0))
    b.call(declare.pthread_setspecific, [key, frame])
    jumped = b.call(declare.setjmp, [_member(b, frame, 2)])
    run, done = function.append_basic_block("run"), function.append_basic_block("done")
    b.cbranch(b.icmp_signed("==", jumped, ir.Constant(I32, 0)), run, done)
    b.position_at_end(run)
    b.call(entry, [args])
    b.branch(done)
    # After the entry returned, or after a jump: read back from the frame, which escaped to `_setjmp` and
    # `pthread_setspecific`, so LLVM keeps these loads after those calls (no value lives in a register across them).
    b.position_at_end(done)
    b.call(declare.pthread_setspecific, [b.load(declare.key, typ=I32), b.load(_member(b, frame, 1), typ=PTR)])
    b.ret(b.load(_member(b, frame, 0), typ=I64))


def _build_checked_alloc(module: ir.Module, declare: _Declarations, make_key: ir.Function) -> None:
    function = ir.Function(module, ir.FunctionType(PTR, [I64, I64]), CHECKED_ALLOC)
    alignment, size = function.args
    b = ir.IRBuilder(function.append_basic_block("entry"))
    pointer = b.alloca(PTR)
    status = b.call(declare.posix_memalign, [pointer, alignment, size])
    allocated, failed = function.append_basic_block("allocated"), function.append_basic_block("failed")
    b.cbranch(b.icmp_signed("==", status, ir.Constant(I32, 0)), allocated, failed)
    b.position_at_end(allocated)
    b.ret(b.load(pointer, typ=PTR))
    b.position_at_end(failed)
    frame = b.call(declare.pthread_getspecific, [declare.frame_key(b, make_key)])
    unguarded, jump = function.append_basic_block("unguarded"), function.append_basic_block("jump")
    b.cbranch(b.icmp_unsigned("==", frame, ir.Constant(PTR, None)), unguarded, jump)
    b.position_at_end(unguarded)
    b.ret(ir.Constant(PTR, None))
    b.position_at_end(jump)
    b.store(size, _member(b, frame, 0))
    b.call(declare.longjmp, [_member(b, frame, 2), ir.Constant(I32, 1)])
    b.unreachable()
