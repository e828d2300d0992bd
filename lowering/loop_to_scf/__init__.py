"""loop -> scf/memref/arith/vector (vector and unroll loops expanded first)."""
