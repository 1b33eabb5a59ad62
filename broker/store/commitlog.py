"""CommitLog: the one append-only log of every message, in fixed-size segment files.

Files: ``commitlog/<20-digit start offset>``, each ``mapped_file_size_commit_log`` bytes; file ``k`` holds global
offsets ``[start, start + size)``. Records use the MAGIC v1 layout of ``protocol.record`` (documented there, byte
by byte). As in RocketMQ (END_FILE_MIN_BLANK_LENGTH), a record goes into the current file only if at least 8 bytes
are left after it; otherwise the rest of the file becomes a blank filler and the record starts the next file::

    | int32 totalSize (= bytes left in the file) | int32 BLANK_MAGIC (0xCBD43194) | zeros ... |

so every record lies wholly inside one file, and a reader that meets BLANK_MAGIC jumps to the next file. (Files
written before this rule may end with fewer than 8 zero bytes; readers treat that the same way.)

Appends are ``pwrite``s of whole encoded batches (``MappedFile.write``); reads are ``memoryview`` slices of the
mapping.
"""

from __future__ import annotations

from typing import Final

from broker.store.file_queue import MappedFileQueue
from broker.store.mapped_file import MappedFile
from protocol.record import BLANK_MAGIC, SIZE_MAGIC, RecordError, check_record, record_size

BLANK_HEAD: Final = SIZE_MAGIC  # the end-of-file filler's head: int32 size, int32 BLANK_MAGIC
END_FILE_MIN_BLANK_LENGTH: Final = 8


class CommitLog:
    __slots__ = ("queue",)

    def __init__(self, directory: str, file_size: int) -> None:
        self.queue = MappedFileQueue(directory, file_size)
        self.queue.preallocate = True  # a full disk is ENOSPC when a segment is created, never a SIGBUS later

    @property
    def file_size(self) -> int:
        return self.queue.file_size

    @property
    def max_record_size(self) -> int:
        """The largest record (or batch of records) one append can take: a whole file but the blank header."""
        return self.queue.file_size - END_FILE_MIN_BLANK_LENGTH

    @property
    def min_offset(self) -> int:
        return self.queue.min_offset

    @property
    def max_offset(self) -> int:
        return self.queue.max_offset

    def writable(self, n: int) -> MappedFile:
        """The file an ``n``-byte append goes to: the current one if ``n`` + 8 bytes are left in it, else (after
        writing the blank filler) a new one. ``n`` must be at most ``max_record_size``."""
        files = self.queue.files
        if files:
            mf = files[-1]
            if n + END_FILE_MIN_BLANK_LENGTH <= mf.size - mf.wrote:  # the common case
                return mf
        mf = self.queue.last_writable()
        if n + END_FILE_MIN_BLANK_LENGTH > mf.size - mf.wrote:
            self._fill_blank(mf)
            mf = self.queue.last_writable()
        return mf

    def _fill_blank(self, mf: MappedFile) -> None:
        left = mf.size - mf.wrote
        if left >= BLANK_HEAD.size:
            mf.write_at(mf.wrote, BLANK_HEAD.pack(left, BLANK_MAGIC))
        mf.wrote = mf.size

    def append(self, data: bytes | bytearray | memoryview) -> int:
        """Append already-encoded records (whose PHYSICALOFFSET fields must match where they land: use
        ``writable`` first when encoding with final offsets); returns the physical offset of the first byte."""
        mf = self.writable(len(data))
        return mf.start + mf.write(data)

    def read(self, phys: int, size: int) -> memoryview | None:
        """The ``size`` bytes at ``phys``, or None when that range is not (or no longer) in the log."""
        mf = self.queue.find(phys)
        if mf is None:
            return None
        pos = phys - mf.start
        if pos + size > mf.wrote:
            return None
        return mf.buf[pos : pos + size]

    def read_size(self, phys: int) -> int | None:
        mf = self.queue.find(phys)
        if mf is None or phys - mf.start + 4 > mf.wrote:
            return None
        return record_size(mf.buf, phys - mf.start)

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
            buf = mf.buf
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
