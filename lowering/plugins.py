"""Plugins: dialects, passes and pipelines from packages outside minimlc, merged into one registry.

A plugin is a function, with no arguments, returning an object with three mappings (any may be missing or empty):

    dialects:  {"toy": lambda: Toy}                                  # name -> lazy loader, as `get_all_dialects()`
    passes:    {"toy-to-graph": lambda: ToyToGraphPass}              # name -> lazy loader, as `get_all_passes()`
    pipelines: {"toy-lower": ("toy -> llvm", "toy-to-graph,lower-to-llvm")}   # name -> (description, pass list)

`Plugin` below is such an object; an xDSL `Universe` (`all_dialects`, `all_passes`) is accepted too. An installed
package announces its function in the `minimlc.plugins` entry-point group (the entry point's name is the plugin's):

    [project.entry-points."minimlc.plugins"]
    toy = "minimlc_toy:plugin"

and is found by every minimlc tool and `InferenceSession`; for quick work `load_plugin("path/to/file.py")` (or a
module name; `mini-opt --load-plugin`) loads one whose file or module defines `plugin()`. `registry()` merges
minimlc's own registries with every plugin's and refuses a name registered twice (naming both owners); a plugin that
fails to import or to build its registries raises `PluginError` naming it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections import ChainMap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from xdsl.ir import Dialect
from xdsl.passes import ModulePass

from minimlc.dialects import get_all_dialects
from minimlc.lowering import get_all_passes

ENTRY_POINT_GROUP = "minimlc.plugins"
MINIMLC = "minimlc"
"""The owner `Registry.origin` gives minimlc's own (and the xDSL) names."""

DialectLoader = Callable[[], Dialect]
PassLoader = Callable[[], type[ModulePass]]


class PluginError(ValueError):
    """A plugin cannot be loaded, or it registers a name that is already taken."""


@dataclass(frozen=True)
class Plugin:
    """What a plugin adds: dialect and pass name -> lazy loader, pipeline name -> (description, pass list)."""

    dialects: Mapping[str, DialectLoader] = field(default_factory=dict[str, DialectLoader])
    passes: Mapping[str, PassLoader] = field(default_factory=dict[str, PassLoader])
    pipelines: Mapping[str, tuple[str, str]] = field(default_factory=dict[str, tuple[str, str]])


@dataclass(frozen=True)
class Registry:
    """Every dialect, pass and pipeline minimlc and its plugins provide, and who provides each name."""

    dialects: dict[str, DialectLoader]
    passes: dict[str, PassLoader]
    pipelines: Mapping[str, tuple[str, str]]
    """`minimlc.lowering.pipeline.PIPELINES` (seen live, not copied) and then the plugins' pipelines."""
    origin: dict[tuple[str, str], str]
    """(kind, name) -> `minimlc` or the plugin's name; kind is `dialect`, `pass` or `pipeline`."""

    def plugin_of(self, kind: str, name: str) -> str | None:
        """The plugin that registered `name` (None: minimlc itself)."""
        owner = self.origin.get((kind, name))
        return None if owner in (None, MINIMLC) else owner


_loaded: dict[str, tuple[Callable[[], Any], str]] = {}
"""Plugins loaded with `load_plugin`: name -> (plugin function, where it came from)."""
_cache: list[Registry] = []


def load_plugin(spec: str) -> str:
    """Load the plugin in a `.py` file or an importable module that defines `plugin()`; returns its name (the file's
    stem or the module's name). Loading the same plugin twice is a no-op; raises PluginError if it cannot be loaded."""
    path = Path(spec)
    name = path.stem if spec.endswith(".py") else spec
    if name in _loaded and _loaded[name][1] == spec:
        return name
    try:
        if spec.endswith(".py"):
            module_spec = importlib.util.spec_from_file_location(f"minimlc_plugin_{name}", path)
            if module_spec is None or module_spec.loader is None or not path.is_file():
                raise FileNotFoundError(f"no such file: {spec}")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[module_spec.name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(spec)
    except Exception as error:
        raise PluginError(f"plugin '{name}' ({spec}) failed to import: {type(error).__name__}: {error}") from None
    function = getattr(module, "plugin", None)
    if not callable(function):
        raise PluginError(f"plugin '{name}' ({spec}) defines no function plugin()")
    _loaded[name] = (function, spec)
    _cache.clear()
    return name


def unload_plugins() -> None:
    """Forget every plugin `load_plugin` loaded (installed plugins stay): for tests and notebooks."""
    _loaded.clear()
    _cache.clear()


def registry() -> Registry:
    """minimlc's dialects, passes and pipelines merged with those of every installed and loaded plugin (cached
    until `load_plugin` or `unload_plugins`). Raises PluginError for a broken plugin or a name registered twice."""
    if not _cache:
        _cache.append(_build())
    return _cache[0]


def _build() -> Registry:
    from minimlc.lowering.pipeline import PIPELINES

    plugin_pipelines: dict[str, tuple[str, str]] = {}
    merged = Registry(get_all_dialects(), get_all_passes(), ChainMap(PIPELINES, plugin_pipelines), {})
    for kind, names in (("dialect", merged.dialects), ("pass", merged.passes), ("pipeline", PIPELINES)):
        merged.origin.update(dict.fromkeys(((kind, name) for name in names), MINIMLC))
    functions = [(point.name, point.load, point.value) for point in entry_points(group=ENTRY_POINT_GROUP)]
    functions += [(name, lambda f=function: f, spec) for name, (function, spec) in _loaded.items()]
    seen: set[object] = set()
    for name, load, where in sorted(functions, key=lambda entry: entry[0]):
        try:
            function = load()
            if function in seen:  # installed and also loaded by module name
                continue
            seen.add(function)
            provided = _normalise(function())
        except PluginError:
            raise
        except Exception as error:
            raise PluginError(f"plugin '{name}' ({where}) failed to load: {type(error).__name__}: {error}") from None
        for kind, table in (("dialect", merged.dialects), ("pass", merged.passes), ("pipeline", plugin_pipelines)):
            for item, value in provided[kind].items():
                owner = merged.origin.get((kind, item))
                if owner is not None:
                    already = "minimlc" if owner == MINIMLC else f"plugin '{owner}'"
                    raise PluginError(f"plugin '{name}' registers {kind} '{item}', which {already} already has")
                table[item] = value
                merged.origin[(kind, item)] = name
    return merged


def _normalise(provided: Any) -> dict[str, Mapping[str, Any]]:
    """A plugin's (or an xDSL `Universe`'s) mappings by kind."""
    return {
        "dialect": dict(getattr(provided, "dialects", None) or getattr(provided, "all_dialects", None) or {}),
        "pass": dict(getattr(provided, "passes", None) or getattr(provided, "all_passes", None) or {}),
        "pipeline": dict(getattr(provided, "pipelines", None) or {}),
    }
