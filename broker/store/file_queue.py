"""MappedFileQueue: a directory of equal-size MappedFiles named by their 20-digit start offset.

Offsets are global across the queue: file ``k`` covers ``[k * size, (k + 1) * size)`` from the first file's start
(files at the head may have been deleted by retention, so the first start is not always 0). The queue rolls to a new
file when the caller asks, finds the file holding an offset, truncates a dirty tail and deletes files at the head.

With a segment warmer attached (``warmer.py``, SYNC_FLUSH commit logs), ``new_file`` takes the next file ready-made
(pre-written with zeros, so the first fsyncs into it do not allocate blocks) when the warmer has it; otherwise it
creates a sparse file with a write guard, whose tail the warmer then pre-writes.

At load, a file shorter than the segment size is padded (a hole: zeros); a longer one is cut to the segment size and
its excess bytes are kept verbatim in ``<name>.overlong`` beside it (never loaded as a segment).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from broker.store.mapped_file import MappedFile, WriteGuard, file_name


class MappedFileQueue:
    __slots__ = ("dir", "file_size", "files", "lazy_populate", "preallocate", "take_prepared")

    def __init__(self, directory: str, file_size: int) -> None:
        self.dir = directory
        self.file_size = file_size
        self.files: list[MappedFile] = []
        # the warmer's hook: (start, path) -> True when it moved a pre-written file to ``path``
        self.take_prepared: Callable[[int, str], bool] | None = None
        self.lazy_populate = False  # new files start with nothing populated (consume queues: see MappedFile)
        self.preallocate = False  # new files get all their blocks at creation (commit log: see MappedFile)

    def load(self, on_repair: Callable[[str], None] | None = None) -> bool:
        """Map every existing segment file. Positions are set by recovery (a loaded file counts as full).

        A file shorter than the segment size is padded with zeros (a hole) to it; a longer one keeps its first
        ``file_size`` bytes and the rest is moved to ``<name>.overlong`` beside it. Either is reported through
        ``on_repair`` (one line); returns True when a file was repaired."""
        if not os.path.isdir(self.dir):
            return False
        names = sorted(n for n in os.listdir(self.dir) if n.isdigit() and len(n) == 20)
        repaired = False
        for name in names:
            path = os.path.join(self.dir, name)
            actual = os.path.getsize(path)
            if actual != self.file_size:
                repaired = True
                if actual > self.file_size:
                    _save_overlong(path, self.file_size)
                    what = f"{path} was {actual} bytes, over the segment size {self.file_size}: kept the first "
                    what += f"{self.file_size}, the rest moved to {path}.overlong"
                else:
                    what = f"{path} was {actual} bytes, short of the segment size {self.file_size}: padded with zeros"
                if on_repair is not None:
                    on_repair(what)
            self.files.append(MappedFile(path, int(name), self.file_size))
        return repaired

    @property
    def min_offset(self) -> int:
        return self.files[0].start if self.files else 0

    @property
    def max_offset(self) -> int:
        """Offset just after the last written byte."""
        return self.files[-1].end if self.files else 0

    @property
    def last(self) -> MappedFile | None:
        return self.files[-1] if self.files else None

    def new_file(self, start: int) -> MappedFile:
        os.makedirs(self.dir, exist_ok=True)
        path = os.path.join(self.dir, file_name(start))
        take = self.take_prepared
        warm = take is not None and take(start, path)
        mf = MappedFile(path, start, self.file_size, preallocate=self.preallocate and not warm)
        if warm:
            mf.wrote = mf.flushed = 0
        elif take is not None:
            mf.guard = WriteGuard()
        if self.lazy_populate:
            mf.populated = 0
        self.files = [*self.files, mf]  # a new list: a flush thread may be walking the old one
        return mf

    def last_writable(self, start_if_empty: int = 0) -> MappedFile:
        """The file to append to: the last one, or a new one when there is none or the last is full."""
        last = self.last
        if last is None:
            return self.new_file(start_if_empty - start_if_empty % self.file_size)
        if last.is_full:
            return self.new_file(last.start + self.file_size)
        return last

    def find(self, offset: int) -> MappedFile | None:
        if not self.files:
            return None
        first = self.files[0].start
        if offset < first:
            return None
        idx = (offset - first) // self.file_size
        if idx >= len(self.files):
            return None
        mf = self.files[idx]
        return mf if mf.start <= offset < mf.start + self.file_size else None

    def truncate(self, offset: int) -> None:
        """Drop everything at and after ``offset``: later files are deleted, the file holding it is zeroed from it."""
        keep: list[MappedFile] = []
        for mf in self.files:
            if mf.start + self.file_size <= offset:
                keep.append(mf)
            elif mf.start <= offset:
                mf.zero_from(offset - mf.start)
                mf.wrote = offset - mf.start
                mf.flushed = mf.wrote
                keep.append(mf)
            else:
                mf.destroy()
        self.files = keep

    def delete_first(self, n: int = 1, *, destroy: bool = True) -> list[MappedFile]:
        """Drop the ``n`` oldest files from the queue; destroys them unless the caller will (in an executor)."""
        gone, self.files = self.files[:n], self.files[n:]
        if destroy:
            for mf in gone:
                mf.destroy()
        return gone

    def flush(self) -> int:
        """Make every written byte durable (blocking; the flush executor calls it); returns the flushed offset.

        Only the files at the tail can hold unflushed bytes (every earlier one was flushed when it filled up, or is
        flushed here), so the walk starts at the newest file and goes back to the first fully flushed one. The list
        is read once: the event loop may roll or drop files meanwhile (it replaces the list, never edits a copy
        that is being iterated)."""
        files = self.files
        i = len(files)
        while i > 0 and files[i - 1].flushed < files[i - 1].wrote:
            i -= 1
        for mf in files[i:]:
            mf.flush()
        return self.flushed_offset

    @property
    def flushed_offset(self) -> int:
        """Offset up to which every byte has been made durable."""
        files = self.files
        if not files:
            return 0
        res = files[-1].end
        for mf in reversed(files):
            if mf.flushed < mf.wrote:
                res = mf.start + mf.flushed
            else:
                break
        return res

    def close(self) -> None:
        for mf in self.files:
            mf.close()
        self.files = []


def _save_overlong(path: str, size: int) -> None:
    with open(path, "rb") as src, open(path + ".overlong", "wb") as dst:
        src.seek(size)
        while chunk := src.read(1 << 20):
            dst.write(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    os.truncate(path, size)
