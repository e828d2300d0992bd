"""PyTorch models through `torch.export` -> `from_exported_program`: minimlc against eager PyTorch and
`torch.compile` (inductor), one thread each.

    python bench/bench_torch.py                          # every model
    python bench/bench_torch.py --models resnet18,bert --rounds 20

Vision models (`examples/torch_vision_models.py`, `examples/torch_vision_transformer_models.py`) at their full
torchvision sizes, batch 1, 224x224 (ViT-B/16 and Swin-T included); `transformers` models from configs with random
weights (`--text-size base`: BERT-base-like 12 layers, hidden 768, 12 heads, FFN 3072; `small`: 4 layers, hidden
256, 4 heads, FFN 1024), batch 1, sequence 128 (Whisper encoder: 80 mel bins x 3000 frames at `base`, 80 x 1000
frames at `small`). Each contender runs once to warm up, then all three run interleaved, one call each per round
(order reversed every other round), and the table shows medians in ms, minimlc's ratio to eager and to inductor (< 1:
minimlc is faster), the import time (`from_exported_program` seconds, decomposition included) and minimlc's compile
time. `torch.compile`'s first call (its compile) is timed too. Progress goes to stderr, the table to stdout.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from minimlc import InferenceSession
from minimlc.frontend.torch.exported_program import from_exported_program

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import torch_vision_models as cnn
import torch_vision_transformer_models as vision_transformers

SEQUENCE = 128
TEXT_SIZES = {
    "base": {"hidden": 768, "layers": 12, "heads": 12, "ffn": 3072, "frames": 3000},
    "small": {"hidden": 256, "layers": 4, "heads": 4, "ffn": 1024, "frames": 1000},
}


def image() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0)),)


def text_models(size: dict[str, int]) -> dict[str, tuple[Callable[[], torch.nn.Module], Callable[[], tuple]]]:
    """The `transformers` models at `size`, each with its input maker."""
    import transformers

    hidden, layers, heads, ffn = size["hidden"], size["layers"], size["heads"], size["ffn"]
    common = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads}
    tokens = {"vocab_size": 30522, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
    sdpa = {"attn_implementation": "sdpa"}

    def ids() -> tuple[torch.Tensor, ...]:
        return (torch.randint(3, 30522, (1, SEQUENCE), generator=torch.Generator().manual_seed(0)),)

    def mels() -> tuple[torch.Tensor, ...]:
        return (torch.randn(1, 80, size["frames"], generator=torch.Generator().manual_seed(0)),)

    def whisper() -> torch.nn.Module:
        config = transformers.WhisperConfig(
            d_model=hidden,
            encoder_layers=layers,
            decoder_layers=1,
            encoder_attention_heads=heads,
            decoder_attention_heads=heads,
            encoder_ffn_dim=ffn,
            decoder_ffn_dim=ffn,
            max_source_positions=size["frames"] // 2,
            decoder_start_token_id=1,
            use_cache=False,
            **tokens,
            **sdpa,
        )
        return transformers.WhisperModel(config).get_encoder()

    return {
        "bert": (
            lambda: transformers.BertModel(
                transformers.BertConfig(**common, intermediate_size=ffn, **tokens, **sdpa), add_pooling_layer=False
            ),
            ids,
        ),
        "gpt2": (
            lambda: transformers.GPT2Model(
                transformers.GPT2Config(
                    n_embd=hidden, n_layer=layers, n_head=heads, use_cache=False, attn_implementation="eager", **tokens
                )
            ),
            ids,
        ),
        "llama": (
            lambda: transformers.LlamaModel(
                transformers.LlamaConfig(
                    **common, intermediate_size=ffn, num_key_value_heads=heads // 2, use_cache=False, **tokens, **sdpa
                )
            ),
            ids,
        ),
        "t5_encoder": (
            lambda: transformers.T5EncoderModel(
                transformers.T5Config(
                    d_model=hidden, d_kv=hidden // heads, d_ff=ffn, num_layers=layers, num_heads=heads, **tokens, **sdpa
                )
            ),
            ids,
        ),
        "clip_text": (
            lambda: transformers.CLIPTextModel(
                transformers.CLIPTextConfig(
                    **common, intermediate_size=ffn, **tokens, max_position_embeddings=SEQUENCE, **sdpa
                )
            ),
            ids,
        ),
        "whisper_encoder": (whisper, mels),
    }


class FirstOutput(torch.nn.Module):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x, return_dict=False)[0]


def models(text_size: str) -> dict[str, tuple[Callable[[], torch.nn.Module], Callable[[], tuple]]]:
    vision = {
        "resnet18": cnn.resnet18,
        "resnet50": cnn.resnet50,
        "mobilenet_v2": cnn.MobileNetV2,
        "mobilenet_v3_small": cnn.MobileNetV3Small,
        "efficientnet_b0": cnn.EfficientNetB0,
        "convnext_tiny": cnn.ConvNeXtTiny,
        "vit_b_16": vision_transformers.vit_b_16,
        "swin_t": vision_transformers.SwinTransformer,
    }
    found = {name: (make, image) for name, make in vision.items()}
    for name, (make, inputs) in text_models(TEXT_SIZES[text_size]).items():
        found[name] = (lambda make=make: FirstOutput(make()), inputs)
    return found


def bench(name: str, module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], rounds: int) -> dict[str, float]:
    module = module.eval()
    started = time.perf_counter()
    imported = from_exported_program(torch.export.export(module, inputs))
    import_seconds = time.perf_counter() - started
    started = time.perf_counter()
    session = InferenceSession.from_imported(imported, num_threads=1)
    compile_seconds = time.perf_counter() - started
    feeds = {info.name: x.numpy() for info, x in zip(imported.inputs, inputs)}
    compiled = torch.compile(module)
    with torch.no_grad():
        started = time.perf_counter()
        want = compiled(*inputs)
        inductor_compile_seconds = time.perf_counter() - started
        eager_out = module(*inputs)
    (got,) = session.run(None, feeds)
    error = float(np.abs(got - eager_out.numpy()).max() / np.abs(eager_out.numpy()).max())
    assert torch.allclose(want, eager_out, rtol=1e-3, atol=1e-3 * float(eager_out.abs().max()))

    def eager() -> None:
        with torch.no_grad():
            module(*inputs)

    def inductor() -> None:
        with torch.no_grad():
            compiled(*inputs)

    contenders = {"eager": eager, "inductor": inductor, "minimlc": lambda: session.run(None, feeds)}
    for run in contenders.values():
        run()
    times: dict[str, list[float]] = {key: [] for key in contenders}
    for round_index in range(rounds):
        order = list(contenders) if round_index % 2 == 0 else list(reversed(contenders))
        for key in order:
            started = time.perf_counter()
            contenders[key]()
            times[key].append(time.perf_counter() - started)
    medians = {key: 1000 * statistics.median(values) for key, values in times.items()}
    print(f"{name}: {medians} import {import_seconds:.1f}s compile {compile_seconds:.1f}s", file=sys.stderr)
    return {
        **medians,
        "import": import_seconds,
        "compile": compile_seconds,
        "inductor_compile": inductor_compile_seconds,
        "error": error,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="", help="comma-separated names (default: all)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--text-size", choices=list(TEXT_SIZES), default="base")
    options = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    available = models(options.text_size)
    names = options.models.split(",") if options.models else list(available)
    header = f"{'model':<20}{'eager ms':>10}{'inductor ms':>12}{'minimlc ms':>12}{'/eager':>8}{'/inductor':>10}"
    header += f"{'import s':>10}{'compile s':>11}{'ind. compile s':>16}{'rel err':>10}"
    rows = []
    for name in names:
        make, inputs = available[name]
        try:
            figures = bench(name, make(), inputs(), options.rounds)
        except Exception as error:  # a model that fails is reported in its row, the others still run
            rows.append(f"{name:<20}failed: {type(error).__name__}: {str(error)[:200]}")
            print(rows[-1], file=sys.stderr)
            continue
        eager, inductor, mini = figures["eager"], figures["inductor"], figures["minimlc"]
        rows.append(
            f"{name:<20}{eager:>10.2f}{inductor:>12.2f}{mini:>12.2f}{mini / eager:>8.2f}{mini / inductor:>10.2f}"
            f"{figures['import']:>10.1f}{figures['compile']:>11.1f}{figures['inductor_compile']:>16.1f}"
            f"{figures['error']:>10.1e}"
        )
    print(header)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
