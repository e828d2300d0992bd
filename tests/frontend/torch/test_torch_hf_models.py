"""Hugging Face `transformers` models built from small configs with random weights (hidden 64, 2 layers, 4 heads,
vocabulary 1000): BERT, GPT-2, LLaMA (grouped-query attention, rotary embeddings), the T5 encoder (relative position
buckets), the Whisper encoder and the CLIP text model, through `torch.export` with a dynamic batch and sequence
(Whisper: batch; its frames are fixed by its position table) -> `from_exported_program` -> one compile, matching
PyTorch eager at two sizes (rtol 1e-4, atol 1e-4 times the largest output magnitude).

GPT-2 runs its eager attention: with SDPA, torch's own `run_decompositions` fails on GPT-2's `view` of the attention
output (a stride its decomposition of SDPA changes), before the importer sees the program.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from minimlc import InferenceSession  # noqa: E402
from minimlc.frontend.torch.exported_program import from_exported_program  # noqa: E402

nn = torch.nn
VOCABULARY, FRAMES, MELS = 1000, 128, 16
SMALL = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128}
TOKENS = {"vocab_size": VOCABULARY, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}


def bert() -> nn.Module:
    config = transformers.BertConfig(**SMALL, **TOKENS, max_position_embeddings=128, attn_implementation="sdpa")
    return transformers.BertModel(config, add_pooling_layer=False)


def gpt2() -> nn.Module:
    config = transformers.GPT2Config(
        n_embd=64, n_layer=2, n_head=4, n_positions=128, use_cache=False, attn_implementation="eager", **TOKENS
    )
    return transformers.GPT2Model(config)


def llama() -> nn.Module:
    config = transformers.LlamaConfig(
        **SMALL,
        **TOKENS,
        num_key_value_heads=2,
        max_position_embeddings=128,
        use_cache=False,
        attn_implementation="sdpa",
    )
    return transformers.LlamaModel(config)


def t5_encoder() -> nn.Module:
    config = transformers.T5Config(
        d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, use_cache=False, attn_implementation="sdpa", **TOKENS
    )
    return transformers.T5EncoderModel(config)


def clip_text() -> nn.Module:
    config = transformers.CLIPTextConfig(**SMALL, **TOKENS, max_position_embeddings=64, attn_implementation="sdpa")
    return transformers.CLIPTextModel(config)


def whisper_encoder() -> nn.Module:
    config = transformers.WhisperConfig(
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        num_mel_bins=MELS,
        max_source_positions=FRAMES // 2,
        decoder_start_token_id=1,
        use_cache=False,
        attn_implementation="sdpa",
        **TOKENS,
    )
    return transformers.WhisperModel(config).get_encoder()


class FirstOutput(nn.Module):
    """The model's first output (its last hidden state) as a plain tensor."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x, return_dict=False)[0]


def token_ids(batch: int, sequence: int) -> torch.Tensor:
    return torch.randint(3, VOCABULARY, (batch, sequence), generator=torch.Generator().manual_seed(batch + sequence))


def mel_frames(batch: int, _: int) -> torch.Tensor:
    return torch.randn(batch, MELS, FRAMES, generator=torch.Generator().manual_seed(batch))


TEXT_MODELS: dict[str, Callable[[], nn.Module]] = {
    "bert": bert,
    "gpt2": gpt2,
    "llama": llama,
    "t5_encoder": t5_encoder,
    "clip_text": clip_text,
}


def check_two_sizes(
    model: nn.Module, make: Callable[[int, int], torch.Tensor], dims: dict[int, torch.export.Dim]
) -> None:
    """Export once with `dims` dynamic, compile once, compare with eager at (1, 7) and (3, 16)."""
    model = FirstOutput(model).eval()
    program = torch.export.export(model, (make(2, 12),), dynamic_shapes=(dims,))
    imported = from_exported_program(program)
    session = InferenceSession.from_imported(imported, num_threads=1)
    for batch, sequence in ((1, 7), (3, 16)):
        x = make(batch, sequence)
        (got,) = session.run(None, {imported.inputs[0].name: x.numpy()})
        with torch.no_grad():
            want = model(x).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    assert session.stats["compiles"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TEXT_MODELS))
def test_text_model_matches_eager_at_two_batch_and_sequence_sizes(name: str) -> None:
    torch.manual_seed(0)
    dims = {0: torch.export.Dim("batch", min=1, max=8), 1: torch.export.Dim("sequence", min=2, max=64)}
    check_two_sizes(TEXT_MODELS[name](), token_ids, dims)


@pytest.mark.slow
def test_whisper_encoder_matches_eager_at_two_batch_sizes() -> None:
    torch.manual_seed(0)
    check_two_sizes(whisper_encoder(), mel_frames, {0: torch.export.Dim("batch", min=1, max=8)})
