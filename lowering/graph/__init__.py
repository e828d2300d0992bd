"""Graph-to-graph passes: cleanups, batch-norm folding, and the convolution/pool preparations."""
