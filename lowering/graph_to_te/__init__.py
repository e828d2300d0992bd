"""graph -> te: one tensor expression per graph op, built with `builder.py` (which the te passes use too), element
arithmetic by type in `scalar.py` (float16/bfloat16 in `small_floats.py`, float8/float4 in `minifloats.py`)."""
