"""te-to-te passes (inlining, convolution algorithm and layouts, math expansion); they build computes with
`graph_to_te/builder.py`."""
