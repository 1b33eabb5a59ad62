"""MappedFile: one fixed-size memory-mapped file, bytes only (it knows nothing about messages).

A file is created at its full size (sparse), named by its 20-digit start offset in its queue, and mapped shared
read/write. Two ways in, one page cache:

* ``write(data)`` copies at the write position with ``os.pwrite`` — the commit log's path. One syscall per append
  (per batch), no page faults on the writer, and measured on this kind of disk the following ``fdatasync`` is ~2x
  faster than an ``msync`` of the same range (pages dirtied through a mapping are write-protected again by
  writeback, so every later store to them faults).
* ``append(data)`` / ``buffer()`` write through the mapping — consume queues and the index: 20-byte units, where a
  syscall each would cost more than the copy.

Readers get ``memoryview`` slices of the mapping (``view``), which see both kinds of writes: the mapping and
``pwrite`` share the page cache. ``wrote`` is the append position, ``flushed`` the position up to which ``flush()``
has made the file durable. ``flush()`` (``fdatasync``) blocks on I/O and is meant for the store's flush executor,
never the event loop.

``populated``: bytes below it may be written through the mapping. A first store into a sparse page of a shared
mapping faults for 1-15 ms on this kind of disk — block reservation waits on the journal — where a ``pwrite``
into the same hole costs ~5 µs, and a store into a page a ``pwrite`` reserved is a cheap minor fault. It is the
whole file unless the owner manages it (consume queues: the first unit of each page is a ``pwrite``; pre-faulting
with ``MADV_POPULATE_WRITE`` off the loop was measured slower: the faults contend with the loop).

Space is allocated, never assumed: a file written through ``write``/``pwrite`` gets ENOSPC as an ``OSError``, but a
store through the mapping into a page the file system cannot back is a SIGBUS that kills the process. So
``preallocate=True`` (commit-log segments) reserves the whole file with ``posix_fallocate`` at creation — a full
disk is an ``OSError`` there, and the half-made file is removed — and ``reserve(end)`` (index files, chunk by
chunk) reserves ``[allocated, end)`` before the mapping is written there.

A file being pre-written by the segment warmer (``warmer.py``) has a ``guard``: the warmer reserves a range well
ahead of the write position before zeroing it, and ``write``/``write_at`` wait (rarely: the margin is megabytes)
while a reserved range would be reached, so zeros never land on written bytes.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import threading
from typing import Final

PAGE: Final = mmap.PAGESIZE
# the commit log's write call (``MappedFile.write``): a module name, not ``Final``, so a test can make it fail the way
# a full or broken disk does (a short write, ENOSPC, EIO) while the class stays compiled
pwrite = os.pwrite


def allocate(fd: int, offset: int, length: int) -> None:
    """Back ``[offset, offset + length)`` of ``fd`` with blocks; OSError (ENOSPC, EDQUOT) when there are none."""
    os.posix_fallocate(fd, offset, length)


def file_name(start_offset: int) -> str:
    return f"{start_offset:020d}"


class WriteGuard:
    """The warmer's reservation in one file: ``reserved`` is the start of the range it is zeroing (None when
    none), read and changed under ``cond``."""

    __slots__ = ("cond", "reserved")

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.reserved: int | None = None


class MappedFile:
    __slots__ = (
        "_fd", "_map", "allocated", "buf", "flushed", "guard", "path", "populated", "size", "start", "wrote",
    )  # fmt: skip

    def __init__(self, path: str, start: int, size: int, *, preallocate: bool = False) -> None:
        self.path = path
        self.start = start
        self.size = size
        existed = os.path.exists(path)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            actual = os.fstat(self._fd).st_size
            if preallocate and actual < size:
                allocate(self._fd, 0, size)
            elif actual < size:
                os.ftruncate(self._fd, size)
            self._map = mmap.mmap(self._fd, size, access=mmap.ACCESS_WRITE)
        except BaseException:
            os.close(self._fd)
            if not existed:
                with contextlib.suppress(OSError):
                    os.unlink(path)  # a file that could not get its space takes none
            raise
        # bytes known to be backed by the file system (existing files: all of them, as before)
        self.allocated = size if preallocate or existed else 0
        self.buf = memoryview(self._map)
        # a new file is empty; an existing one gets its positions from recovery
        self.wrote = 0 if not existed else size
        self.flushed = self.wrote
        self.guard: WriteGuard | None = None
        self.populated = size

    def reserve(self, end: int) -> None:
        """Back ``[allocated, end)`` with real blocks (``posix_fallocate``) before the mapping is written there;
        OSError (ENOSPC) when the disk is full, with ``allocated`` unchanged."""
        end = min(self.size, end)
        if end > self.allocated:
            allocate(self._fd, self.allocated, end - self.allocated)
            self.allocated = end

    @property
    def end(self) -> int:
        """Global offset just after the last written byte."""
        return self.start + self.wrote

    @property
    def remaining(self) -> int:
        return self.size - self.wrote

    @property
    def is_full(self) -> bool:
        return self.wrote >= self.size

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """``pwrite`` ``data`` at the write position; returns the position it was written at. Caller checks the
        room. Raises OSError (e.g. ENOSPC) with ``wrote`` unchanged: a partial write is overwritten by the next."""
        guard = self.guard
        if guard is not None:
            with guard.cond:
                while guard.reserved is not None and self.wrote + len(data) > guard.reserved:
                    guard.cond.wait()
                return self._write(data)
        return self._write(data)

    def _write(self, data: bytes | bytearray | memoryview) -> int:
        pos = self.wrote
        n = len(data)
        done = pwrite(self._fd, data, pos)
        while done < n:  # regular files write fully unless the disk is full; be exact anyway
            more = pwrite(self._fd, memoryview(data)[done:], pos + done)
            if more <= 0:
                raise OSError(f"short write to {self.path} at {pos + done}")
            done += more
        self.wrote = pos + n
        return pos

    def write_at(self, pos: int, data: bytes) -> None:
        """``pwrite`` at an absolute position inside the file, leaving ``wrote`` alone (blank fillers)."""
        guard = self.guard
        if guard is not None:
            with guard.cond:
                while guard.reserved is not None and pos + len(data) > guard.reserved:
                    guard.cond.wait()
                os.pwrite(self._fd, data, pos)
            return
        os.pwrite(self._fd, data, pos)

    @property
    def fd(self) -> int:
        return self._fd

    def append(self, data: bytes | bytearray | memoryview) -> int:
        """Copy ``data`` through the mapping at the write position; returns that position. Caller checks the room."""
        pos = self.wrote
        n = len(data)
        self._map[pos : pos + n] = data
        self.wrote = pos + n
        return pos

    def view(self, pos: int, n: int) -> memoryview:
        return self.buf[pos : pos + n]

    def buffer(self) -> memoryview:
        return self.buf

    def flush(self) -> int:
        """Make everything written so far durable (``fdatasync``); returns the new flushed position. Blocking.

        ``wrote`` is read before the sync, so a concurrent append is covered only if it landed before it."""
        wrote = self.wrote
        if wrote > self.flushed:
            os.fdatasync(self._fd)
            self.flushed = wrote
        return self.flushed

    def sync(self) -> None:
        """``fdatasync`` unconditionally (headers rewritten in place, e.g. index files)."""
        os.fdatasync(self._fd)

    def zero_from(self, pos: int) -> None:
        """Overwrite [pos, size) with zeros, so bytes of a truncated tail can never be read back as records. Holes
        (never written) are zero already and stay holes."""
        chunk = 1 << 20
        zeros = bytes(min(chunk, self.size))
        for p, stop in self.data_ranges(pos):
            first = p
            while p < stop:
                n = min(chunk, stop - p)
                # skip ranges that are already zero, to keep pages unallocated
                if self._map[p : p + n] != zeros[:n]:
                    self._map[p : p + n] = zeros[:n]
                p += n
            self.release(first, stop)
        self.wrote = min(self.wrote, pos)
        self.flushed = min(self.flushed, pos)

    def data_end(self, pos: int) -> int:
        """Position of the first hole at or after ``pos`` (``size`` when there is none, or the file system cannot
        say): bytes past it were never written, so scans and tail checks stop there instead of paging in the rest
        of a sparse segment."""
        if pos >= self.size:
            return self.size
        try:
            return min(self.size, os.lseek(self._fd, pos, os.SEEK_HOLE))
        except OSError:
            return self.size

    def data_ranges(self, pos: int) -> list[tuple[int, int]]:
        """The written (non-hole) ranges of the file from ``pos`` on; the whole rest when holes cannot be seen."""
        out: list[tuple[int, int]] = []
        p = pos
        while p < self.size:
            try:
                d = os.lseek(self._fd, p, os.SEEK_DATA)
            except OSError:  # ENXIO: only a hole is left
                break
            if d >= self.size:
                break
            h = self.data_end(d)
            out.append((d, h))
            p = h
        return out

    def find(self, sub: bytes, start: int, end: int) -> int:
        return self._map.find(sub, start, end)

    def release(self, start: int, end: int) -> None:
        """Drop the mapping's pages in [start, end) from this process (they stay in the page cache; a later read
        faults them back in), so a recovery scan does not leave a whole segment resident."""
        start -= start % PAGE
        end = min(self.size, end + (-end) % PAGE)
        if end > start:
            try:
                self._map.madvise(mmap.MADV_DONTNEED, start, end - start)
            except (OSError, ValueError):
                pass

    def close(self) -> None:
        self.buf.release()
        try:
            self._map.close()
        except BufferError:
            # a caller still holds a memoryview slice of the mapping: the mapping is released when that view goes;
            # closing must not fail half-way (the store would keep its lock and the other files open)
            pass
        finally:
            os.close(self._fd)

    def destroy(self) -> None:
        self.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
