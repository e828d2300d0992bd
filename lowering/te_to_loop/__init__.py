"""te -> loop: loop nests over buffers, one kernel function per compute."""
