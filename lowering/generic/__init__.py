"""Passes that work at every stage of the pipeline, on any dialect: common subexpression elimination."""
