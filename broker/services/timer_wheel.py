"""The timer's on-disk index (RocketMQ 5's ``timerwheel`` + ``timerlog``): pending timers live in files, not in
the Python heap, so a million of them cost disk pages, not objects.

``TimerLog`` — ``<storePathRootDir>/timerlog/<20-digit start position>``: segments of fixed-size units, appended in
enqueue order; a unit's position is its byte offset over all segments. Units of one wheel slot are chained
newest → oldest through ``prev``. A segment is deleted once every unit in it has been delivered.

========== ===== ====== ===========================================================================================
field      type  offset meaning
========== ===== ====== ===========================================================================================
prev       int64 0      position of the previous unit of the same slot, -1 for the first
phys       int64 8      commit-log offset of the message (stored in ``rmq_sys_wheel_timer``)
size       int32 16     its record size
flags      int32 20     0 (reserved)
slot_ms    int64 24     delivery slot (the message's TIMER_OUT_MS: a multiple of ``timerPrecisionMs``)
enqueue_ms int64 32     when it entered the wheel (TIMER_ENQUEUE_MS on delivery)
========== ===== ====== ===========================================================================================

``TimerWheel`` — ``<storePathRootDir>/timerwheel``: one fixed-size memory-mapped file of ``slots`` entries; the slot
of time ``t`` is ``(t // precision) % slots``. ``slots`` spans twice ``timerMaxDelaySec``, so a slot is reused only
after its round has been delivered (a unit whose ``slot_ms`` is a later round stays chained and is re-linked).

========== ===== ====== ===========================================================================================
field      type  offset meaning
========== ===== ====== ===========================================================================================
slot_ms    int64 0      the earliest ``slot_ms`` chained here (-1: empty)
last       int64 8      position of the newest unit of the chain (-1: empty)
count      int32 16     units chained
pad        int32 20     0
========== ===== ====== ===========================================================================================
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

UNIT = struct.Struct(">qqiiqq")
UNIT_SIZE = UNIT.size  # 40
SLOT = struct.Struct(">qqii")
SLOT_SIZE = SLOT.size  # 24
EMPTY = (-1, -1, 0, 0)


@dataclass(frozen=True, slots=True)
class Unit:
    pos: int
    prev: int
    phys: int
    size: int
    slot_ms: int
    enqueue_ms: int


class TimerWheel:
    """The slot table, memory-mapped (its pages are the kernel's, not the heap's)."""

    def __init__(self, path: Path, slots: int, precision_ms: int) -> None:
        self.slots = slots
        self.precision = precision_ms
        size = slots * SLOT_SIZE
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists() or path.stat().st_size != size
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if fresh:  # a new wheel, or one sized for another timerMaxDelaySec/timerPrecisionMs: rebuilt by the caller
            os.ftruncate(self._fd, 0)
            os.ftruncate(self._fd, size)
        self._mm = mmap.mmap(self._fd, size)
        if fresh:
            self.clear_all()
        self.fresh = fresh

    def index(self, t_ms: int) -> int:
        return (t_ms // self.precision) % self.slots

    def get(self, t_ms: int) -> tuple[int, int, int]:
        """(slot_ms, last, count) of the slot of ``t_ms``."""
        slot_ms, last, count, _ = SLOT.unpack_from(self._mm, self.index(t_ms) * SLOT_SIZE)
        return slot_ms, last, count

    def put(self, t_ms: int, slot_ms: int, last: int, count: int) -> None:
        if count <= 0:
            slot_ms, last, count = -1, -1, 0
        SLOT.pack_into(self._mm, self.index(t_ms) * SLOT_SIZE, slot_ms, last, count, 0)

    def clear_all(self) -> None:
        self._mm[:] = SLOT.pack(*EMPTY) * self.slots

    def flush(self) -> None:
        self._mm.flush()

    def close(self) -> None:
        self._mm.close()
        os.close(self._fd)


class TimerLog:
    """Append-only units in segment files, read and written with ``pread``/``pwrite`` (no mapping, no cache)."""

    def __init__(self, directory: Path, segment_units: int) -> None:
        self.dir = directory
        self.segment_bytes = segment_units * UNIT_SIZE
        directory.mkdir(parents=True, exist_ok=True)
        self._fds: dict[int, int] = {}
        starts = sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit())
        for s in starts:
            self._fds[s] = os.open(directory / f"{s:020d}", os.O_RDWR)
        if starts:
            last = starts[-1]
            self.end = last + os.fstat(self._fds[last]).st_size
        else:
            self.end = 0

    @property
    def first(self) -> int:
        return min(self._fds) if self._fds else self.end

    def segments(self) -> list[int]:
        return sorted(self._fds)

    def _fd_for(self, pos: int, create: bool = False) -> tuple[int, int] | None:
        start = pos - pos % self.segment_bytes
        fd = self._fds.get(start)
        if fd is None:
            if not create:
                return None
            fd = os.open(self.dir / f"{start:020d}", os.O_RDWR | os.O_CREAT, 0o644)
            self._fds[start] = fd
        return fd, pos - start

    def append(self, prev: int, phys: int, size: int, slot_ms: int, enqueue_ms: int) -> int:
        pos = self.end
        got = self._fd_for(pos, create=True)
        assert got is not None
        fd, at = got
        os.pwrite(fd, UNIT.pack(prev, phys, size, 0, slot_ms, enqueue_ms), at)
        self.end = pos + UNIT_SIZE
        return pos

    def read(self, pos: int) -> Unit | None:
        got = self._fd_for(pos)
        if got is None:
            return None
        fd, at = got
        raw = os.pread(fd, UNIT_SIZE, at)
        if len(raw) < UNIT_SIZE:
            return None
        prev, phys, size, _flags, slot_ms, enqueue_ms = UNIT.unpack(raw)
        return Unit(pos, prev, phys, size, slot_ms, enqueue_ms)

    def read_segment(self, start: int) -> list[Unit]:
        """Every unit of one segment (recovery and segment bookkeeping)."""
        fd = self._fds.get(start)
        if fd is None:
            return []
        raw = os.pread(fd, self.segment_bytes, 0)
        n = len(raw) // UNIT_SIZE
        return [
            Unit(start + i * UNIT_SIZE, p, ph, sz, sm, em)
            for i, (p, ph, sz, _f, sm, em) in enumerate(UNIT.iter_unpack(raw[: n * UNIT_SIZE]))
        ]

    def truncate(self, end: int) -> None:
        """Drop every unit at or after ``end`` (recovery: units the checkpoint does not cover)."""
        for start in sorted(self._fds, reverse=True):
            if start >= end and start > 0:
                self.delete_segment(start)
            elif start < end <= start + self.segment_bytes or (start == 0 and end == 0):
                os.ftruncate(self._fds[start], end - start)
        self.end = min(self.end, end)

    def delete_segment(self, start: int) -> None:
        fd = self._fds.pop(start, None)
        if fd is not None:
            os.close(fd)
        (self.dir / f"{start:020d}").unlink(missing_ok=True)

    def flush(self) -> None:
        for fd in list(self._fds.values()):
            os.fsync(fd)

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
