"""IndexService.put_keys (a batch as columns) writes the same index files, byte for byte, as one put per message."""

from __future__ import annotations

import os
from pathlib import Path

from broker.store.index import IndexService

_TS = 1_700_000_000_000


def _files(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


def _items(start: int, n: int) -> list[tuple[str | None, str | None, int]]:
    # keys with several items, empty items, unique keys only, keys only; offsets increase
    out: list[tuple[str | None, str | None, int]] = []
    for i in range(start, start + n):
        keys = None if i % 3 == 0 else (f"k{i} k{i % 5}  x" if i % 3 == 1 else f"solo{i % 7}")
        uniq = None if i % 4 == 3 else f"7F00000100002A9F0000{i:012X}"
        out.append((keys, uniq, 1000 + i * 300))
    return out


def test_put_keys_same_bytes_as_put(tmp_path: Path) -> None:
    # 7 slots: entries of one batch share slots (each chain must run through the batch's own earlier entries);
    # 40 entries per file: the batches straddle file boundaries, several files roll
    one, bulk = tmp_path / "one", tmp_path / "bulk"
    a = IndexService(str(one), 7, 40)
    b = IndexService(str(bulk), 7, 40)
    a.load()
    b.load()
    start = 0
    for batch, size in enumerate((1, 9, 30, 17, 64, 5)):
        items = _items(start, size)
        ts = _TS + batch * 1500
        for keys, uniq, phys in items:
            a.put("TopicA", keys, uniq, phys, ts)
        b.put_keys("TopicA", [k for k, _u, _p in items], [u for _k, u, _p in items], [p for _k, _u, p in items], ts)
        start += size
    a.close()
    b.close()
    assert len(_files(one)) > 3
    assert _files(one) == _files(bulk)
    # and the bulk-written files answer queries (newest first)
    c = IndexService(str(bulk), 7, 40)
    c.load()
    solo3 = [phys for keys, _u, phys in _items(0, start) if keys == "solo3"]
    assert len(solo3) > 2
    assert c.query("TopicA", "solo3", 100, 0, _TS + 10**7) == solo3[::-1]
    assert c.query("TopicA", f"7F00000100002A9F0000{0x21:012X}", 10, 0, _TS + 10**7) == [1000 + 0x21 * 300]
    c.close()
