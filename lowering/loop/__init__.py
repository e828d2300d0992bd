"""Schedule primitives on the loop dialect (split, reorder, tile, ...), the loop analysis they share, the kernel
patterns that fusion reads, and the code generation of vectorize and unroll loops (`expand.py`)."""
