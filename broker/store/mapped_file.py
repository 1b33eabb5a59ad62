"""MappedFile: one fixed-size memory-mapped file, bytes only (it knows nothing about messages).

A file is created at its full size (sparse), named by its 20-digit start offset in its queue, and mapped read/write.
``wrote`` is the append position (in memory), ``flushed`` the position up to which ``flush()`` has msync'ed the
mapping. ``flush()`` blocks on I/O and is meant to be called from the store's flush executor, never on the event
loop. Readers get ``memoryview`` slices of the mapping: no copy until the caller joins them into a reply.
"""

from __future__ import annotations

import mmap
import os
from typing import Final

PAGE: Final = mmap.PAGESIZE


def file_name(start_offset: int) -> str:
    return f"{start_offset:020d}"


class MappedFile:
    __slots__ = ("_fd", "_map", "_view", "flushed", "path", "size", "start", "wrote")

    def __init__(self, path: str, start: int, size: int) -> None:
        self.path = path
        self.start = start
        self.size = size
        existed = os.path.exists(path)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            actual = os.fstat(self._fd).st_size
            if actual < size:
                os.ftruncate(self._fd, size)
            self._map = mmap.mmap(self._fd, size, access=mmap.ACCESS_WRITE)
        except BaseException:
            os.close(self._fd)
            raise
        self._view = memoryview(self._map)
        # a new file is empty; an existing one gets its positions from recovery
        self.wrote = 0 if not existed else size
        self.flushed = self.wrote

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

    def append(self, data: bytes | bytearray | memoryview) -> int:
        """Copy ``data`` at the write position; returns the position it was written at. Caller checks the room."""
        pos = self.wrote
        n = len(data)
        self._map[pos : pos + n] = data
        self.wrote = pos + n
        return pos

    def view(self, pos: int, n: int) -> memoryview:
        return self._view[pos : pos + n]

    def buffer(self) -> memoryview:
        return self._view

    def flush(self) -> int:
        """msync the written-but-unflushed range; returns the new flushed position. Blocking."""
        wrote = self.wrote
        if wrote > self.flushed:
            begin = (self.flushed // PAGE) * PAGE
            self._map.flush(begin, wrote - begin)
            self.flushed = wrote
        return self.flushed

    def zero_from(self, pos: int) -> None:
        """Overwrite [pos, size) with zeros, so bytes of a truncated tail can never be read back as records."""
        chunk = 1 << 20
        zeros = bytes(min(chunk, self.size))
        p = pos
        while p < self.size:
            n = min(chunk, self.size - p)
            # skip ranges that are already zero (the common case: never written), to keep pages unallocated
            if self._map[p : p + n] != zeros[:n]:
                self._map[p : p + n] = zeros[:n]
            p += n
        self.wrote = min(self.wrote, pos)
        self.flushed = min(self.flushed, pos)

    def close(self) -> None:
        self._view.release()
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
