"""Package exports loaded on first use: a package's ``__getattr__`` and ``__dir__`` that import each public name's
module only when the name is first looked up.

A package that re-exports many modules (``protocol.bodies``: every JSON body, ``client``: every client) would
otherwise build all of them for a process that uses one. ``from package import Name`` keeps working (it asks the
package's ``__getattr__``), and so does ``from package import *`` (``__all__`` names are looked up the same way);
the package imports the names under ``TYPE_CHECKING`` so type checkers see them as before.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def exports(package: str, homes: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` whose names live in modules given as ``{module: "Name ..."}``
    (names separated by blanks)."""
    home = {name: module for module, names in homes.items() for name in names.split()}

    def __getattr__(name: str) -> object:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        vars(sys.modules[package])[name] = value  # later look-ups find it in the package itself
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *home})

    return __getattr__, __dir__
