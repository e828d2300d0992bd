"""Plugins (`minimlc.lowering.plugins`): loading from a file or module, refusals that name the plugin, and
`build_pipeline(extra_passes=)`, which puts passes (a plugin's or ours) after a pipeline stage."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from minimlc.lowering import plugins
from minimlc.lowering.pipeline import build_pipeline, expand_pipelines, pipeline_passes

TOY = Path(__file__).resolve().parents[2] / "examples" / "plugin"

PASS_PLUGIN = '''
from dataclasses import dataclass

from xdsl.passes import ModulePass

from minimlc.lowering.plugins import Plugin


@dataclass(frozen=True)
class NothingPass(ModulePass):
    """Do nothing."""

    name = "{name}"

    def apply(self, ctx, op):
        pass


def plugin():
    return Plugin(passes={{"{name}": lambda: NothingPass}}, pipelines={{"{name}-twice": ("twice", "{name},{name}")}})
'''


@pytest.fixture(autouse=True)
def forget_plugins() -> Iterator[None]:
    yield
    plugins.unload_plugins()


def write_plugin(directory: Path, file: str, pass_name: str) -> str:
    path = directory / file
    path.write_text(PASS_PLUGIN.format(name=pass_name))
    return str(path)


def test_file_plugin_adds_a_pass_and_a_pipeline(tmp_path: Path) -> None:
    assert plugins.load_plugin(write_plugin(tmp_path, "nothing.py", "nothing")) == "nothing"
    known = plugins.registry()
    assert known.passes["nothing"]().name == "nothing"
    assert known.plugin_of("pass", "nothing") == "nothing"
    assert known.plugin_of("pass", "cse") is None
    assert expand_pipelines("nothing-twice,cse") == "nothing,nothing,cse"


def test_module_plugin_loads_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TOY))
    assert plugins.load_plugin("minimlc_toy") == plugins.load_plugin("minimlc_toy") == "minimlc_toy"
    known = plugins.registry()
    assert {"toy-to-graph", "toy-fuse-matmul-relu", "toy-relu-to-clip"} <= set(known.passes)
    assert known.dialects["toy"]().name == "toy"
    assert known.plugin_of("dialect", "toy") == "minimlc_toy"


def test_plugin_that_fails_to_import_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_module_anywhere\n")
    with pytest.raises(plugins.PluginError) as error:
        plugins.load_plugin(str(broken))
    assert str(error.value) == (
        f"plugin 'broken' ({broken}) failed to import: ModuleNotFoundError: No module named 'no_such_module_anywhere'"
    )


def test_plugin_without_plugin_function_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    with pytest.raises(plugins.PluginError, match=r"plugin 'empty' \(.*\) defines no function plugin\(\)"):
        plugins.load_plugin(str(empty))


def test_plugin_whose_function_fails_is_named(tmp_path: Path) -> None:
    failing = tmp_path / "failing.py"
    failing.write_text("def plugin():\n    raise RuntimeError('no registries today')\n")
    plugins.load_plugin(str(failing))
    with pytest.raises(
        plugins.PluginError, match=r"plugin 'failing' \(.*\) failed to load: RuntimeError: no registries"
    ):
        plugins.registry()


def test_plugin_may_not_take_a_minimlc_name(tmp_path: Path) -> None:
    plugins.load_plugin(write_plugin(tmp_path, "clash.py", "cse"))
    with pytest.raises(plugins.PluginError) as error:
        plugins.registry()
    assert str(error.value) == "plugin 'clash' registers pass 'cse', which minimlc already has"


def test_two_plugins_may_not_share_a_name(tmp_path: Path) -> None:
    plugins.load_plugin(write_plugin(tmp_path, "first.py", "shared-pass"))
    plugins.load_plugin(write_plugin(tmp_path, "second.py", "shared-pass"))
    with pytest.raises(plugins.PluginError) as error:
        plugins.registry()
    assert str(error.value) == "plugin 'second' registers pass 'shared-pass', which plugin 'first' already has"


def test_extra_passes_go_where_their_stage_ends() -> None:
    base = pipeline_passes(2)
    extended = list(
        map(str, build_pipeline(2, extra_passes={"graph": ["cse", "dce"], "loop": "licm", "llvm": "canonicalize"}))
    )
    graph_end, loop_end = base.index("graph-to-te"), base.index("te-to-loop") + 1
    assert extended == [
        *base[:graph_end],
        "cse",
        "dce",
        *base[graph_end:loop_end],
        "licm",
        *base[loop_end:],
        "canonicalize",
    ]


def test_extra_passes_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown pass 'no-such-pass' in the passes after stage 'graph'"):
        build_pipeline(3, extra_passes={"graph": ["no-such-pass"]})
    with pytest.raises(ValueError, match="unknown stage 'tensor'"):
        build_pipeline(3, extra_passes={"tensor": ["cse"]})
    with pytest.raises(ValueError, match="cannot insert passes after stage 'schedule': the pipeline does not run"):
        build_pipeline(1, extra_passes={"schedule": ["cse"]})
