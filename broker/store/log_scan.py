"""Scanning the commit log for valid records, resynchronising past damage.

A record is valid when ``record_check.verify`` accepts it and its PHYSICALOFFSET field names where it lies. When
the bytes at a position are not a valid record, the scanner looks for the next valid record in the same file (the
MAGIC v1 code followed by a record that verifies and sits where it says it sits — or a blank filler that reaches
exactly to the end of the file); the damaged bytes in between are handed to ``on_damage``. Only when nothing valid
follows — in this file or any later one — is the position the end of the log (a torn tail).

The scan reads through the mapping but gives the pages back as it goes (``MappedFile.release``), and never looks at
the unwritten (sparse) part of a segment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from broker.store.commitlog import CommitLog
from broker.store.mapped_file import MappedFile
from broker.store.record_check import verify
from broker.store.sealed_ranges import LENIENT, SealedRanges
from protocol.record import (
    BLANK,
    BLANK_MAGIC,
    I32,
    MAGIC_V1,
    RecordError,
    check_record,
    record_physical_offset,
    record_size,
)

MAGIC_BYTES: Final = I32.pack(MAGIC_V1)
BLANK_BYTES: Final = I32.pack(BLANK_MAGIC)
_RELEASE_EVERY: Final = 64 << 20

# on_damage(mf, pos, length, reason): a damaged region [pos, pos + length) of ``mf`` that valid records follow
OnDamage = Callable[[MappedFile, int, int, str], None]


def check_at(mf: MappedFile, pos: int, *, check_crc: bool, seals: SealedRanges | None) -> int:
    """Size of the valid record at ``pos`` of ``mf`` (``BLANK`` for a filler); RecordError otherwise."""
    buf = mf.buf
    if check_crc:
        n = verify(buf, pos, require_seal=LENIENT if seals is None else seals.rule(mf.start + pos))
    else:
        n = check_record(buf, pos, check_crc=False)
    if n == BLANK:
        size = record_size(buf, pos)
        if size != mf.size - pos:
            raise RecordError(f"blank filler of size {size} at {pos} does not reach the end of the file")
        return BLANK
    phys = record_physical_offset(buf, pos)
    if phys != mf.start + pos:
        raise RecordError(f"record at {mf.start + pos} says it is at {phys}")
    return n


def resync(mf: MappedFile, pos: int, *, check_crc: bool, seals: SealedRanges | None) -> int | None:
    """Position of the first valid record (or filler) after ``pos`` in ``mf``, or None."""
    for start, stop in mf.data_ranges(pos + 1):
        i = max(start, pos + 1)
        b = mf.find(BLANK_BYTES, i + 4, stop)  # searched again only once passed: a region can hold many magics
        while True:
            m = mf.find(MAGIC_BYTES, i + 4, stop)
            if 0 <= b < i + 4:
                b = mf.find(BLANK_BYTES, i + 4, stop)
            hits = [h for h in (m, b) if h >= 0]
            if not hits:
                break
            cand = min(hits) - 4
            try:
                check_at(mf, cand, check_crc=check_crc, seals=seals)
                return cand
            except (RecordError, IndexError, ValueError):
                i = cand + 1
    return None


def scan(
    commitlog: CommitLog,
    start: int,
    on_damage: OnDamage,
    *,
    check_crc: bool = True,
    seals: SealedRanges | None = None,
    on_record: Callable[[int, int], None] | None = None,
) -> int:
    """Walk records from ``start`` (a record boundary) to the end of the log; returns the offset after the last
    valid record. ``on_record(offset, size)`` is called for every valid record; every file up to the end gets its
    write position."""
    files = commitlog.queue.files
    offset = start
    # a file whose rest held nothing valid: damage if a valid record follows in a later file, else the end
    pending: tuple[MappedFile, int, str] | None = None
    for idx, mf in enumerate(files):
        if mf.start + mf.size <= offset:
            continue
        pos = max(0, offset - mf.start)
        released = pos
        last = idx == len(files) - 1
        while pos < mf.size:
            if pos + 8 > mf.size:
                pos = mf.size
                break
            try:
                n = check_at(mf, pos, check_crc=check_crc, seals=seals)
            except (RecordError, IndexError, ValueError) as exc:
                nxt = resync(mf, pos, check_crc=check_crc, seals=seals)
                if nxt is None:
                    if last or pending is not None:
                        mf.release(released, mf.size)
                        return _end(mf, pos, pending)
                    pending = (mf, pos, str(exc))
                    pos = mf.size
                    break
                on_damage(mf, pos, nxt - pos, str(exc))
                pos = nxt
                continue
            if pending is not None:
                on_damage(pending[0], pending[1], pending[0].size - pending[1], pending[2])
                pending = None
            if n == BLANK:
                pos = mf.size
                break
            if on_record is not None:
                on_record(mf.start + pos, n)
            pos += n
            if pos - released >= _RELEASE_EVERY:
                mf.release(released, pos)
                released = pos
        mf.release(released, mf.size)
        mf.wrote = mf.size
        offset = mf.start + mf.size
    if pending is not None:
        return _end(pending[0], pending[1], None)
    return offset


def _end(mf: MappedFile, pos: int, pending: tuple[MappedFile, int, str] | None) -> int:
    """The log ends at ``pos`` of ``mf`` — or, when an earlier file's rest held nothing valid either, there."""
    if pending is not None:
        mf, pos = pending[0], pending[1]
    mf.wrote = pos
    return mf.start + pos
