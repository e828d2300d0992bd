"""The files `minimlc` reads and writes: the model given, output paths checked before any work, atomic writes.

    model_file("model.onnx")                        # a usage error for a folder, FileNotFoundError for nothing
    output_file("out/model.mlc", "-o")              # a usage error if 'out' is a file or the path a folder
    write_atomically(Path("model.ll"), text)        # a temporary name beside it, renamed when complete
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from minimlc.tools.cli_options import UsageError


def model_file(path: str) -> Path:
    """`path` as a model file; FileNotFoundError if nothing is there, a usage error if it is a folder."""
    model = Path(path)
    if model.is_dir():
        raise UsageError(f"'{path}' is a directory, not a model file")
    if not model.is_file():
        raise FileNotFoundError(2, "no such model file", path)
    return model


def is_saved_model(path: Path) -> bool:
    """Whether `path` starts as the files `InferenceSession.save` writes (`minimlc.runtime.artifact`)."""
    from minimlc.runtime.artifact import MAGIC

    with path.open("rb") as file:
        return file.read(len(MAGIC)) == MAGIC


def _check_parent(path: Path, flag: str) -> None:
    """A usage error if a folder `path` needs cannot be made (a file is in the way) or written."""
    for ancestor in path.absolute().parents:
        if ancestor.exists():
            if not ancestor.is_dir():
                raise UsageError(f"{flag} {path}: '{ancestor}' is a file, not a directory")
            if not os.access(ancestor, os.W_OK | os.X_OK):
                raise UsageError(f"{flag} {path}: directory '{ancestor}' is not writable")
            return


def output_file(path: str | Path, flag: str) -> Path:
    """`path` checked as a file to write (its folders are made when it is written): a usage error naming `flag` if
    it is a folder or a file stands where a folder of it should be."""
    output = Path(path)
    if output.is_dir():
        raise UsageError(f"{flag} {path}: is a directory, not a file")
    if not _is_special(output):
        _check_parent(output, flag)
    return output


def _is_special(path: Path) -> bool:
    """Whether `path` is there and no regular file (`/dev/null`, a pipe): written in place, not renamed over."""
    return path.exists() and not path.is_file()


def output_dir(path: str, flag: str) -> Path:
    """`path` checked as a folder to write files into (made when they are written): a usage error naming `flag` if
    it, or a folder above it, is a file."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{flag} {path}: is a file, not a directory")
    _check_parent(folder / "_", flag)
    return folder


def write_atomically(path: Path, data: str | bytes | Callable[[Path], object]) -> None:
    """Write `data` (text, bytes, or a function writing the file it is given) to `path` through a temporary file
    beside it, renamed into place once complete: a failure leaves the old file, or none. A device or pipe
    (`/dev/null`) is written in place."""
    if _is_special(path):
        _write(path, data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(descriptor)
    temporary = Path(name)
    try:
        _write(temporary, data)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _write(path: Path, data: str | bytes | Callable[[Path], object]) -> None:
    if isinstance(data, str):
        path.write_text(data)
    elif isinstance(data, bytes):
        path.write_bytes(data)
    else:
        data(path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def output_files(names: Sequence[str], folder: Path) -> dict[str, Path]:
    """Where `--save-outputs FOLDER` writes each output: `FOLDER/NAME.npy`, each `/` and `\\` of the name made `_`,
    so every name stays inside the folder (`gpu_0/softmax_1` -> `gpu_0_softmax_1.npy`, `../up` -> `.._up.npy`);
    a usage error if two outputs would share a file."""
    files: dict[str, Path] = {}
    owners: dict[str, str] = {}
    for name in names:
        stem = re.sub(r"[/\\\x00]", "_", name) or "_"
        owner = owners.setdefault(stem, name)
        if owner != name:
            raise UsageError(
                f"--save-outputs: outputs '{owner}' and '{name}' would both be saved as {folder / stem}.npy"
            )
        files[name] = folder / f"{stem}.npy"
    return files
