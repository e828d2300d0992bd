"""Schedule primitives on the loop dialect (split, reorder, tile, ...) and the loop analysis they share."""
