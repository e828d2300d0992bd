"""Command-line tools: `mini-opt` (IR driver) and `minimlc` (compile and run models)."""
