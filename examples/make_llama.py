"""Write a small LLaMA-architecture decoder with a KV cache (`llama_cache.py`: seeded random weights, 4 layers,
hidden 256, 8 heads, 2 KV heads, vocabulary 4,096, 512 positions) for `minimlc generate`.

    python examples/make_llama.py                      # writes examples/llama.onnx
    python examples/make_llama.py other/path.onnx
    minimlc generate examples/llama.onnx --prompt-ids 1,2,3 --max-new-tokens 16
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llama_cache import LlamaDims, llama_with_cache

SMALL = LlamaDims(hidden=256, heads=8, kv_heads=2, ffn=688, vocab=4096, layers=4, max_positions=512)


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "llama.onnx"
    onnx.save(llama_with_cache(SMALL), path)
    print(f"wrote {path}: inputs input_ids, attention_mask, position_ids and {2 * SMALL.layers} cache tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
