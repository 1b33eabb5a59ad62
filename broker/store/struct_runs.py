"""Structs of ``n`` back-to-back copies of one fixed big-endian layout (a consume-queue unit, an index entry),
cached per (layout, count): a batch's records are packed by one ``struct`` call instead of one per record.

A producer's batches come in a few sizes, so the cache stays small; it is emptied when it reaches
``_CACHE_MAX`` layouts (a hostile mix of sizes costs a rebuild, never unbounded memory)."""

from __future__ import annotations

import struct
from typing import Final

_CACHE: dict[tuple[str, int], struct.Struct] = {}
_CACHE_MAX: Final = 512


def repeated(unit: struct.Struct, n: int) -> struct.Struct:
    """``n`` of ``unit``'s fields back to back, in ``unit``'s byte order (its format's first character)."""
    key = (unit.format, n)
    st = _CACHE.get(key)
    if st is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        fmt = unit.format
        st = _CACHE[key] = struct.Struct(fmt[0] + fmt[1:] * n)
    return st
