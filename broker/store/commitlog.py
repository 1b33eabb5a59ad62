"""CommitLog: the one append-only log of every message, in fixed-size segment files.

Records use the MAGIC v1 layout of ``protocol.message`` (documented there, byte by byte). A segment ends with a
blank filler when the next record does not fit in what is left of it::

    | int32 totalSize (= bytes left in the file) | int32 BLANK_MAGIC (0xCBD43194) | zeros ... |

so a reader that meets BLANK_MAGIC jumps to the next file, and every record lies wholly inside one file. When fewer
than 8 bytes are left, the tail stays zero and readers treat it the same way.

``append`` patches QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP into pre-encoded records in place and copies the
whole batch with one write into the mapping.
"""

from __future__ import annotations

import struct
from typing import Final

from broker.store.file_queue import MappedFileQueue
from broker.store.mapped_file import MappedFile
from protocol.message import BLANK_MAGIC, I32, I64, POS_PHYSICALOFFSET, POS_QUEUEOFFSET, RecordError, check_record

BLANK_HEAD: Final = struct.Struct(">ii")
assert BLANK_HEAD.size == 8


class CommitLog:
    __slots__ = ("queue",)

    def __init__(self, directory: str, file_size: int) -> None:
        self.queue = MappedFileQueue(directory, file_size)

    @property
    def file_size(self) -> int:
        return self.queue.file_size

    @property
    def min_offset(self) -> int:
        return self.queue.min_offset

    @property
    def max_offset(self) -> int:
        return self.queue.max_offset

    def append(
        self, buf: bytearray, sizes: list[int], queue_offsets: list[int], store_ts_pos: list[int], store_ts: int
    ) -> int:
        """Append the records in ``buf`` (their sizes in ``sizes``) as one write; returns the physical offset of the
        first. Fills in each record's queue offset, physical offset and store timestamp. ``len(buf)`` must be at most
        the file size (the caller checks)."""
        mf = self.queue.last_writable()
        if len(buf) > mf.remaining:
            self._fill_blank(mf)
            mf = self.queue.last_writable()
        phys = mf.start + mf.wrote
        pos = 0
        for size, qoff, ts_pos in zip(sizes, queue_offsets, store_ts_pos, strict=True):
            I64.pack_into(buf, pos + POS_QUEUEOFFSET, qoff)
            I64.pack_into(buf, pos + POS_PHYSICALOFFSET, phys + pos)
            I64.pack_into(buf, pos + ts_pos, store_ts)
            pos += size
        mf.append(buf)
        return phys

    def _fill_blank(self, mf: MappedFile) -> None:
        left = mf.remaining
        if left >= BLANK_HEAD.size:
            BLANK_HEAD.pack_into(mf.buffer(), mf.wrote, left, BLANK_MAGIC)
        mf.wrote = mf.size

    def read(self, phys: int, size: int) -> memoryview | None:
        """The ``size`` bytes at ``phys``, or None when that range is not (or no longer) in the log."""
        mf = self.queue.find(phys)
        if mf is None:
            return None
        pos = phys - mf.start
        if pos + size > mf.wrote:
            return None
        return mf.view(pos, size)

    def read_size(self, phys: int) -> int | None:
        mf = self.queue.find(phys)
        if mf is None or phys - mf.start + 4 > mf.wrote:
            return None
        (size,) = I32.unpack_from(mf.buffer(), phys - mf.start)
        return int(size)

    def roll_next_file(self, phys: int) -> int:
        """Start offset of the file after the one that would hold ``phys``."""
        size = self.file_size
        return phys + size - phys % size

    def scan_valid(self, start: int, *, check_crc: bool) -> tuple[int, list[tuple[int, int]]]:
        """Walk records from ``start`` (a record boundary); returns the offset after the last valid record and the
        (offset, size) of every valid record seen. Stops at the first invalid record: that is the torn tail."""
        found: list[tuple[int, int]] = []
        files = self.queue.files
        offset = start
        for mf in files:
            if mf.start + mf.size <= offset:
                continue
            buf = mf.buffer()
            pos = offset - mf.start
            while pos < mf.size:
                if pos + 8 > mf.size:
                    pos = mf.size
                    break
                try:
                    n = check_record(buf, pos, check_crc=check_crc)
                except RecordError:
                    mf.wrote = pos
                    return mf.start + pos, found
                if n < 0:  # blank filler: the rest of this file is padding
                    pos = mf.size
                    break
                found.append((mf.start + pos, n))
                pos += n
            mf.wrote = mf.size
            offset = mf.start + mf.size
        return offset, found

    def flush(self) -> int:
        return self.queue.flush()

    @property
    def flushed_offset(self) -> int:
        return self.queue.flushed_offset

    def close(self) -> None:
        self.queue.close()
