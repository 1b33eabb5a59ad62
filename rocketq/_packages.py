"""Pins this distribution's top-level packages (``protocol``, ``client``, ``namesrv``, ``broker``,
``spark_connector``) to the directory that holds ``rocketq``, so that a project's own ``client.py`` (or ``protocol/``)
earlier on ``sys.path`` — the script's directory, the working directory — cannot shadow them.

Importing this module runs ``claim()``, which puts a meta path finder first on ``sys.meta_path`` that answers only those five names, from this
distribution's directory (site-packages for a wheel, the source tree for an editable install); every other import
is left to the normal machinery. A module of one of those names that is already imported from somewhere else cannot
be replaced under the code that imported it: ``claim()`` then raises an ImportError that names the file.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
NAMES: Final = ("protocol", "client", "namesrv", "broker", "spark_connector")


class DistributionFinder(importlib.abc.MetaPathFinder):
    """Finds the five top-level packages in ``ROOT`` only; their submodules follow their ``__path__`` as usual."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in NAMES:
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [str(ROOT)])


def _origin(module: ModuleType) -> Path | None:
    where = getattr(module, "__file__", None)
    return Path(where).resolve() if where else None


def claim() -> None:
    """Install the finder (once) after checking that no foreign module already took one of the names."""
    for name in NAMES:
        module = sys.modules.get(name)
        if module is None:
            continue
        origin = _origin(module)
        if origin is None or origin.parent != ROOT / name:
            raise ImportError(
                f"rocketq needs the package name {name!r}, but {name!r} is already imported from {origin or module!r};"
                f" rename that module (rocketq's own is in {ROOT / name})",
                name=name,
            )
    if not any(isinstance(f, DistributionFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, DistributionFinder())


claim()
