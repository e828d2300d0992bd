"""scf/memref/arith/vector -> xDSL's llvm dialect, and the llvm dialect -> LLVM IR text."""
