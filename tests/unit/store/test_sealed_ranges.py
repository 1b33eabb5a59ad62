"""Where the store appended sealed records itself, a record without its trailer is damage; where another writer
may have appended (a broker that did not seal, a replica's copy), an unsealed record still reads."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from _store_util import get_all, put, small_config

from broker.store import GetMessageStatus, MessageStore
from broker.store.record_check import TRAILER_LEN
from broker.store.request import GetRequest
from broker.store.sealed_ranges import GUARDED, LENIENT, STRICT, SealedRanges

T = "TopicSealed"


def _ranges(root: Path) -> tuple[int, list[tuple[int, int]]]:
    data = (root / "crc_since").read_bytes()
    (since,) = struct.unpack_from(">q", data)
    return since, [tuple(p) for p in struct.iter_unpack(">qq", data[8:])]  # type: ignore[misc]


def _bodies(store: MessageStore) -> list[bytes]:
    """Every body a consumer gets pulling queue 0 from offset 0 (skipped damage leaves a gap in queue offsets)."""
    out: list[bytes] = []
    off = 0
    while (r := store.get_message_sync(GetRequest("g", T, 0, off, 32))).status is GetMessageStatus.FOUND:
        out.extend(m.body for m in r.messages())
        off = r.next_begin_offset
    return out


def _blank_trailer_name(root: Path, phys: int, size: int) -> None:
    """Zero the whole trailer name (``__CRC32#\\x01``) of the record at ``phys``: it looks written unsealed."""
    with open(root / "commitlog" / f"{0:020d}", "r+b") as f:
        f.seek(phys + size - TRAILER_LEN)
        f.write(b"\x00" * 9)


async def _fill(root: Path, n: int, *, seal: bool, first: int = 0) -> list[tuple[int, int, bytes]]:
    store = MessageStore.open(small_config(root, seal_records=seal))
    await store.start()
    out = []
    try:
        for i in range(first, first + n):
            it = await put(store, T, 0, b"m%03d" % i, {"KEYS": f"k{i}"})
            out.append((it.wrote_offset, it.size, b"m%03d" % i))
    finally:
        await store.close()
    return out


async def test_a_damaged_trailer_where_the_store_sealed_is_damage(tmp_path: Path) -> None:
    written = await _fill(tmp_path, 10, seal=True)
    since, ranges = _ranges(tmp_path)
    end = written[-1][0] + written[-1][1]
    assert since == 0 and ranges == [(0, end)]
    phys, size, _ = written[4]
    _blank_trailer_name(tmp_path, phys, size)
    os.remove(tmp_path / "checkpoint")  # recovery verifies every record again
    store = MessageStore.open(small_config(tmp_path))
    try:
        assert _bodies(store) == [b for _p, _s, b in written if b != b"m004"]
        assert store.integrity.quarantined_records == 1
    finally:
        store.close_sync()


async def test_records_a_non_sealing_writer_appended_still_read(tmp_path: Path) -> None:
    """Sealing store, then a writer that does not seal (a downgraded broker), then the sealing store again: every
    record reads, and the ranges say the middle part was not this store's."""
    first = await _fill(tmp_path, 5, seal=True)
    middle = await _fill(tmp_path, 5, seal=False, first=5)
    last = await _fill(tmp_path, 5, seal=True, first=10)
    since, ranges = _ranges(tmp_path)
    assert since == 0
    assert ranges == [(0, middle[0][0]), (last[0][0], last[-1][0] + last[-1][1])]
    seals = SealedRanges.load(str(tmp_path))
    assert seals is not None
    assert [seals.rule(p) for p, _s, _b in (first[0], middle[0], last[0])] == [STRICT, GUARDED, STRICT]
    store = MessageStore.open(small_config(tmp_path))
    try:
        assert [m.body for m in get_all(store, T, 0)] == [b for _p, _s, b in first + middle + last]
        assert store.integrity.quarantined_records == 0
    finally:
        store.close_sync()


async def test_replicated_bytes_end_the_range(tmp_path: Path) -> None:
    """A replica copies a master that does not seal: the copied records are outside the replica's ranges and
    read after a restart."""
    src = MessageStore.open(small_config(tmp_path / "src", seal_records=False))
    await src.start()
    for i in range(8):
        await put(src, T, 0, b"r%d" % i)
    dst = MessageStore.open(small_config(tmp_path / "dst"))
    await dst.start()
    try:
        off = 0
        while off < src.commitlog.max_offset:
            chunk = src.read_replication_chunk(off, 300)
            assert chunk
            dst.append_replicated(off, chunk)
            off += len(chunk)
    finally:
        await src.close()
        await dst.close()
    _since, ranges = _ranges(tmp_path / "dst")
    assert all(s == e for s, e in ranges)  # nothing appended by the replica itself
    os.remove(tmp_path / "dst" / "checkpoint")
    store = MessageStore.open(small_config(tmp_path / "dst"))
    try:
        assert [m.body for m in get_all(store, T, 0)] == [b"r%d" % i for i in range(8)]
    finally:
        store.close_sync()


def test_rule_and_old_file(tmp_path: Path) -> None:
    (tmp_path / "crc_since").write_bytes(struct.pack(">q", 100))  # the file of the version before ranges
    seals = SealedRanges.load(str(tmp_path))
    assert seals is not None and seals.ranges == ()
    assert [seals.rule(p) for p in (0, 99, 100, 10**9)] == [LENIENT, LENIENT, GUARDED, GUARDED]
    seals.open_range(500, 0)
    seals.mark(800, 0.0, force=True)
    assert [seals.rule(p) for p in (499, 500, 799, 800)] == [GUARDED, STRICT, STRICT, GUARDED]
    assert SealedRanges.load(str(tmp_path)).ranges == ((500, 800),)  # type: ignore[union-attr]
    seals.mark(900, 1.0)  # within the interval: not yet
    assert seals.ranges == ((500, 800),)
    seals.open_range(800, 0)  # reopened where it ended: the same range goes on
    assert seals.ranges == ((500, 800),)
    seals.open_range(950, 850)  # someone else wrote 800..950; the first range is below the log's start now
    assert seals.ranges == ((950, 950),)
    (tmp_path / "crc_since").write_bytes(b"\x00" * 13)  # torn: read as no file (only ever less strict)
    assert SealedRanges.load(str(tmp_path)) is None


def test_a_mark_that_cannot_be_written_is_logged_and_kept_in_memory(tmp_path: Path, monkeypatch, caplog) -> None:
    seals = SealedRanges(str(tmp_path), 0, ())
    seals.open_range(0, 0)

    def full(*_a: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    seals.mark(4096, 0.0, force=True)  # does not raise into the flush that called it
    assert seals.ranges == ((0, 4096),) and seals.rule(100) == STRICT
    assert "cannot record the sealed range" in caplog.text
