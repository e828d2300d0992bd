"""Token generation over decoder models with a KV cache (`generator.Generator`), compiled once."""

from minimlc.generation.generator import Generator
from minimlc.generation.sampling import SamplingOptions
from minimlc.generation.signature import DecoderSignature, NotADecoderError

__all__ = ["DecoderSignature", "Generator", "NotADecoderError", "SamplingOptions"]
