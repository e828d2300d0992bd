"""PyTorch frontend: FX graphs (`from_fx`) and `torch.export` programs (`from_exported_program`) -> graph-dialect
module + weight store, an `ImportedModel` that `InferenceSession.from_imported` compiles like an ONNX import. The
`torch.compile` backend built on `from_fx` is the driver's (`minimlc.driver.torch_compile`).

torch is an optional extra (`pip install "minimlc[torch]"`): only this room (and that backend) imports it.
"""

from minimlc.frontend.torch.aten_common import AtenImportError, UnsupportedAtenOpsError
from minimlc.frontend.torch.aten_symbolic import SymbolicShapeError
from minimlc.frontend.torch.exported_program import from_exported_program
from minimlc.frontend.torch.fx import TorchImportError, UnsupportedTorchOpsError, from_fx

__all__ = [
    "AtenImportError",
    "SymbolicShapeError",
    "TorchImportError",
    "UnsupportedAtenOpsError",
    "UnsupportedTorchOpsError",
    "from_exported_program",
    "from_fx",
]
