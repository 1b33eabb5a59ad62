"""Which build of rocketq's modules this process imports: the mypyc-compiled one or the pure-Python source.

The compiled build (``make compile`` in a checkout, or a wheel from ``make dist``; the module list is
``[tool.rocketq.compile]`` in pyproject.toml) puts an extension module beside each compiled ``.py`` file, plus
their one shared library ``rocketq__mypyc`` at the top level. Python imports an extension module before a source
file of the same name, so the compiled build is used wherever it is present. This module decides otherwise in two
cases, all or nothing (compiled modules of one build call each other directly, so a mix of a stale compiled module
and a fresh source one would run both versions):

| case                                                        | what is imported                              |
|-------------------------------------------------------------|-----------------------------------------------|
| ``ROCKETQ_PURE=1`` in the environment                        | the ``.py`` sources of every package of ours  |
| a checkout whose compiled file is older than its ``.py``     | the sources, with one line on stderr          |
| otherwise                                                   | the compiled modules where they exist          |

``install()`` runs when this module is imported, from ``protocol`` when that is first imported (``protocol/__init__``, which every package of ours imports
before its own modules); it puts a finder first on ``sys.meta_path`` that resolves our modules from source and
bytecode files only. Standard library only (protocol imports nothing of ours).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Final

PURE_ENV: Final = "ROCKETQ_PURE"
# the top-level packages of the distribution (pyproject.toml's packages.find), the ones the finder answers for
PACKAGES: Final = frozenset(
    {"protocol", "runtime", "namesrv", "controller", "broker", "client", "spark_connector", "rocketq"}
)
SHARED_LIB: Final = "rocketq__mypyc"

_state: dict[str, str] = {}  # "mode": "pure" | "compiled" | "stale" once install() ran


class SourceOnlyFinder(importlib.abc.MetaPathFinder):
    """Finds our modules among ``.py`` (and ``.pyc``) files only, never extension modules."""

    def __init__(self) -> None:
        self._finders: dict[str, importlib.machinery.FileFinder] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if path is None or fullname.partition(".")[0] not in PACKAGES:
            return None  # a top-level package itself is never compiled: the normal path finder finds it
        for entry in path:
            finder = self._finders.get(entry)
            if finder is None:
                finder = importlib.machinery.FileFinder(
                    entry,
                    (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES),
                    (importlib.machinery.SourcelessFileLoader, importlib.machinery.BYTECODE_SUFFIXES),
                )
                self._finders[entry] = finder
            spec = finder.find_spec(fullname, target)
            if spec is not None:
                return spec
        return None


def stale(root: Path) -> str | None:
    """In a checkout (``pyproject.toml`` beside the packages) with a compiled build: the first compiled module (one
    with an extension module beside it) whose source is newer than the build's shared library, or None. An
    installed wheel has no pyproject.toml and is never stale."""
    libs = list(root.glob(SHARED_LIB + ".*"))
    if not libs or not (root / "pyproject.toml").exists():
        return None
    built = min(lib.stat().st_mtime for lib in libs)
    for package in sorted(PACKAGES):
        for ext in (root / package).rglob("*.so"):
            source = ext.with_name(ext.name.split(".", 1)[0] + ".py")
            if source.exists() and source.stat().st_mtime > built:
                return str(source.relative_to(root))
    return None


def install() -> str:
    """Choose the build once per process (see the table above) and return it: "pure", "compiled" or "stale"."""
    if "mode" in _state:
        return _state["mode"]
    mode = "compiled"
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        mode = "pure"
    else:
        root = Path(__file__).resolve().parent.parent
        newer = stale(root)
        if newer is not None:
            mode = "stale"
            print(
                f"rocketq: {newer} is newer than its compiled module: running the pure source (make compile)",
                file=sys.stderr,
            )
    if mode != "compiled":
        sys.meta_path.insert(0, SourceOnlyFinder())
    _state["mode"] = mode
    return mode


def compiled_modules() -> list[str]:
    """The modules of ours imported so far that are compiled extension modules, sorted."""
    out = []
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in PACKAGES and isinstance(
            getattr(module, "__loader__", None), importlib.machinery.ExtensionFileLoader
        ):
            out.append(name)
    return sorted(out)


def available() -> bool:
    """Whether this process runs the compiled build: chosen (``install()``) and present (its shared library found)."""
    return install() == "compiled" and importlib.util.find_spec(SHARED_LIB) is not None


def describe() -> str:
    """One phrase for banners and ``--version``: "mypyc-compiled (N modules)" or "pure Python" (with the reason)."""
    mode = install()
    if mode == "compiled":
        n = len(compiled_modules())
        return f"mypyc-compiled ({n} modules loaded)" if n else "pure Python (no compiled build present)"
    return "pure Python (ROCKETQ_PURE)" if mode == "pure" else "pure Python (compiled build is stale)"


install()
