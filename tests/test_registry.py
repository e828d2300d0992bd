"""The registries: every key is the registered object's own name, and every pipeline names registered passes."""

import pytest

from minimlc.dialects import get_all_dialects
from minimlc.lowering import get_all_passes
from minimlc.lowering.pipeline import PIPELINES, expand_pipelines, split_pass_list


@pytest.mark.parametrize(("name", "factory"), sorted(get_all_passes().items()))
def test_pass_key_is_pass_name(name, factory) -> None:
    assert factory().name == name


@pytest.mark.parametrize(("name", "factory"), sorted(get_all_dialects().items()))
def test_dialect_key_is_dialect_name(name, factory) -> None:
    assert factory().name == name


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_pipelines_name_registered_passes(pipeline: str) -> None:
    passes = get_all_passes()
    for item in split_pass_list(expand_pipelines(pipeline)):
        name = item.split("{", 1)[0]  # a pass with options: `te-conv-im2col{algorithm=direct}`
        assert name in passes, f"pipeline {pipeline} names unknown pass {name}"


def test_split_pass_list_respects_braces() -> None:
    assert split_pass_list("a, b{x=1,2 y=3},c") == ["a", "b{x=1,2 y=3}", "c"]


def test_import_pass_modules_imports_the_module_of_every_pass() -> None:
    """What a compile in a forked child relies on (`compile_model(isolated=True)` calls it first): every pass's module
    imported in the parent, so that the children find them."""
    import subprocess
    import sys

    code = (
        "import sys; from minimlc.lowering import _OURS, import_pass_modules; import_pass_modules(); "
        "missing = [m for m, _ in _OURS.values() if 'minimlc.lowering.' + m not in sys.modules]; print(missing)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
