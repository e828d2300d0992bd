"""Passes and analyses that work at every stage of the pipeline, on any dialect: common subexpression elimination
(`cse`) and the structural key that kernels are deduplicated by (`structural_key`)."""
