"""ConsumeQueue: the per (topic, queueId) index into the commit log, in fixed-size files of 20-byte units.

Files live in ``consumequeue/<topic>/<queueId>/<20-digit start byte offset>``. Unit ``n`` (the message with queue
offset ``n``) is at byte ``n * 20`` of the queue::

    | int64 commitLogOffset | int32 size | int64 tagsHashCode |      (big-endian, 20 bytes)

A unit of zeros (size 0) marks the end of written data. A unit with ``commitLogOffset`` = -1 (``MARKER_PHYS``) holds
the queue offset of a record that was quarantined or could not be found: reads skip it with a log line. ``min_offset`` is the first unit still backed by the commit
log (units pointing into deleted commit-log files are logically gone once retention moves it forward).

The first unit written into each page goes in with ``os.pwrite`` (a few µs), the rest of the page through the
mapping: a first store into a sparse page of a mapping blocks the event loop for milliseconds here (block
reservation waits on the journal), while a store into a page a ``pwrite`` has already reserved is a minor fault
(measured p99 ~10 µs against ~1-2 ms). A file's ``populated`` mark is the end of the last page so reserved.
"""

from __future__ import annotations

import errno
import os
import struct
from collections.abc import Callable, Iterator
from typing import Final

from broker.store.file_queue import MappedFileQueue
from broker.store.mapped_file import PAGE, MappedFile, allocate

UNIT: Final = struct.Struct(">qiq")
UNIT_SIZE: Final = 20
assert UNIT.size == UNIT_SIZE
MARKER_PHYS: Final = -1


_CHUNK: Final = 4096
_CHUNK_UNITS: Final = struct.Struct(">" + "qiq" * _CHUNK)


def iter_unit_chunks(buf: memoryview, count: int) -> Iterator[tuple[int, tuple[int, ...]]]:
    """The first ``count`` units of ``buf`` a few thousand at a time: (index of the first, flat tuple of
    phys, size, tags values) — one ``struct`` call per chunk instead of one per unit (start-up checks)."""
    i = 0
    while i < count:
        k = min(_CHUNK, count - i)
        st = _CHUNK_UNITS if k == _CHUNK else struct.Struct(">" + "qiq" * k)
        yield i, st.unpack_from(buf, i * UNIT_SIZE)
        i += k


def _first_in_page(mf: MappedFile, pos: int, phys: int, size: int, tags_code: int) -> None:
    """A unit reaching into a page not yet reserved: allocate the page(s) it touches (``posix_fallocate``: all or
    an OSError — a ``pwrite`` into a full volume may write the part in the first page and report a short count,
    leaving the second page unbacked, and a later store there through the mapping would be a SIGBUS), ``pwrite``
    it, and let the rest of those pages be written through the mapping."""
    end = pos + UNIT_SIZE
    page_end = min(mf.size, end + (-end) % PAGE)
    allocate(mf.fd, pos - pos % PAGE, page_end - (pos - pos % PAGE))
    data = UNIT.pack(phys, size, tags_code)
    if os.pwrite(mf.fd, data, pos) != UNIT_SIZE:
        raise OSError(errno.ENOSPC, f"short write to {mf.path}")
    mf.populated = page_end


def _written_after(mf: MappedFile, pos: int) -> bool:
    """Whether any byte at or after ``pos`` is not zero (only the file's written ranges are read)."""
    for start, stop in mf.data_ranges(pos):
        if bytes(mf.buf[max(start, pos) : stop]).count(0) != stop - max(start, pos):
            return True
    return False


class ConsumeQueue:
    __slots__ = (
        "checked_below", "min_logic_offset", "queue", "queue_id", "rebuild_from", "rebuilding", "topic", "verified",
    )  # fmt: skip

    def __init__(self, root: str, topic: str, queue_id: int, file_size: int) -> None:
        self.topic = topic
        self.queue_id = queue_id
        self.queue = MappedFileQueue(os.path.join(root, topic, str(queue_id)), file_size)
        self.queue.lazy_populate = True
        self.min_logic_offset = 0  # byte offset of the first live unit
        # queue offsets [lo, hi) whose records a read has verified this run (the store's read check, done once)
        self.verified = (0, 0)
        # units below this queue offset were on disk before this run's recovery: the unit itself may be damaged even
        # where its record lies in the range recovery verified, so reads check them once too (set by recovery)
        self.checked_below = 0
        # while a background rebuild (cq_rebuild.py) puts back units from the commit log: the units dispatched
        # meanwhile (queue offset, phys, size, tags code), appended once it is done; and where it started
        self.rebuilding: list[tuple[int, int, int, int]] | None = None
        self.rebuild_from = 0

    def load(self, on_repair: Callable[[str], None] | None = None) -> bool:
        """Map the files; True when one had to be padded or cut (its units must be rebuilt)."""
        return self.queue.load(on_repair)

    def recover(self) -> bool:
        """Find the end of written units in every file (a zero-size unit ends it). Returns True when a file ended
        early — a non-last file, or a unit zeroed with written units after it: the units after the gap were
        dropped and must be rebuilt."""
        gap = False
        files = self.queue.files
        for i, mf in enumerate(files):
            pos = mf.size - mf.size % UNIT_SIZE
            for i0, vals in iter_unit_chunks(mf.buf, mf.size // UNIT_SIZE):
                sizes = vals[1::3]
                if min(sizes) > 0:
                    continue
                pos = (i0 + next(j for j, n in enumerate(sizes) if n <= 0)) * UNIT_SIZE
                break
            mf.wrote = pos
            mf.flushed = pos
            if pos < mf.size and (i < len(files) - 1 or _written_after(mf, pos)):
                # a gap in a non-last file, or a zeroed (damaged) unit with units after it: what follows is
                # unreachable, drop it (recovery rebuilds it from the commit log)
                self.queue.truncate(mf.start + pos)
                gap = True
                break
        if self.queue.files:
            self.min_logic_offset = max(self.min_logic_offset, self.queue.files[0].start)
            last = self.queue.files[-1]
            last.populated = last.wrote - last.wrote % PAGE  # pages past the end may be holes: pwrite there
        return gap

    def rewrite(self, queue_offset: int, phys: int, size: int, tags_code: int) -> None:
        """Overwrite an existing unit (repair)."""
        pos = queue_offset * UNIT_SIZE
        mf = self.queue.find(pos)
        if mf is not None and pos - mf.start < mf.wrote:
            UNIT.pack_into(mf.buf, pos - mf.start, phys, size, tags_code)
            mf.flushed = min(mf.flushed, pos - mf.start)

    @property
    def max_offset(self) -> int:
        """Queue offset of the next message (= number of messages ever written)."""
        return self.queue.max_offset // UNIT_SIZE

    @property
    def min_offset(self) -> int:
        return self.min_logic_offset // UNIT_SIZE

    def put(self, queue_offset: int, phys: int, size: int, tags_code: int) -> bool:
        """Write the unit for ``queue_offset``. Units already present are skipped (re-dispatch after recovery);
        a gap is refused (returns False) since units must be dense. While the queue is being rebuilt, a unit past
        its end (or at it: markers guessed by a re-dispatch) is kept aside and written when the rebuild is done."""
        if self.rebuilding is not None and queue_offset >= self.max_offset:
            self.rebuilding.append((queue_offset, phys, size, tags_code))
            return True
        files = self.queue.files
        if files:
            mf = files[-1]
            wrote = mf.wrote
            if mf.start + wrote == queue_offset * UNIT_SIZE and wrote < mf.size:  # the common case: next unit
                if wrote + UNIT_SIZE <= mf.populated:
                    UNIT.pack_into(mf.buf, wrote, phys, size, tags_code)
                else:
                    _first_in_page(mf, wrote, phys, size, tags_code)
                mf.wrote = wrote + UNIT_SIZE
                return True
        expected = self.max_offset
        if queue_offset < expected:
            return True
        if queue_offset > expected:
            if expected == 0 and not self.queue.files:
                # first unit of a queue whose head was deleted elsewhere: start the file where the offset falls
                start = queue_offset * UNIT_SIZE
                mf = self.queue.new_file(start - start % self.queue.file_size)
                mf.wrote = start - mf.start
                self.min_logic_offset = start
            else:
                return False
        mf = self.queue.last_writable()
        if mf.wrote + UNIT_SIZE <= mf.populated:
            UNIT.pack_into(mf.buf, mf.wrote, phys, size, tags_code)
        else:
            _first_in_page(mf, mf.wrote, phys, size, tags_code)
        mf.wrote += UNIT_SIZE
        return True

    def put_rebuilt(self, queue_offset: int, phys: int, size: int, tags_code: int) -> bool:
        """``put`` for the background rebuild: past the units kept aside."""
        kept, self.rebuilding = self.rebuilding, None
        try:
            return self.put(queue_offset, phys, size, tags_code)
        finally:
            self.rebuilding = kept

    def read(self, queue_offset: int, max_units: int) -> tuple[memoryview, int] | None:
        """Up to ``max_units`` units from ``queue_offset`` within one file: (bytes, count), or None if absent."""
        pos = queue_offset * UNIT_SIZE
        if pos < self.min_logic_offset:
            return None
        mf = self.queue.find(pos)
        if mf is None:
            return None
        rel = pos - mf.start
        avail = (mf.wrote - rel) // UNIT_SIZE
        if avail <= 0:
            return None
        n = min(avail, max_units)
        return mf.buf[rel : rel + n * UNIT_SIZE], n

    def unit(self, queue_offset: int) -> tuple[int, int, int] | None:
        got = self.read(queue_offset, 1)
        if got is None:
            return None
        phys, size, tag = UNIT.unpack_from(got[0], 0)
        return int(phys), int(size), int(tag)

    def last_unit(self) -> tuple[int, int, int] | None:
        mx = self.max_offset
        return self.unit(mx - 1) if mx > self.min_offset else None

    def roll_next_file(self, queue_offset: int) -> int:
        per_file = self.queue.file_size // UNIT_SIZE
        return queue_offset + per_file - queue_offset % per_file

    def correct_min(self, commit_log_min: int) -> list[MappedFile]:
        """Advance ``min_logic_offset`` past units whose message lies before ``commit_log_min`` (deleted), and drop
        whole files that hold only such units; returns those files for the caller to destroy."""
        gone: list[MappedFile] = []
        while len(self.queue.files) > 1:
            first = self.queue.files[0]
            phys, _size, _tag = UNIT.unpack_from(first.buf, first.wrote - UNIT_SIZE)
            if phys < commit_log_min:
                gone.extend(self.queue.delete_first(destroy=False))
            else:
                break
        if not self.queue.files:
            return gone
        first = self.queue.files[0]
        self.min_logic_offset = max(self.min_logic_offset, first.start)
        lo = self.min_offset
        hi = self.max_offset
        # binary search the first unit whose message is still in the commit log
        while lo < hi:
            mid = (lo + hi) // 2
            u = self.unit(mid)
            if u is not None and u[0] >= commit_log_min:
                hi = mid
            else:
                lo = mid + 1
        self.min_logic_offset = max(self.min_logic_offset, lo * UNIT_SIZE)
        return gone

    def flush(self) -> None:
        self.queue.flush()

    def destroy(self) -> None:
        for mf in self.queue.files:
            mf.destroy()
        self.queue.files = []

    def close(self) -> None:
        self.queue.close()
