"""Replica appends: the store side of replication (the HA service in ``broker.ha`` owns the sockets).

A replica (a slave, or a master catching up from a slave that is ahead of it) receives raw commit-log bytes cut at
arbitrary points: a chunk may end in the middle of a record, never crosses a segment file, and includes the BLANK
filler at a file's end. ``ReplicaParser`` walks the bytes appended so far from its own position (``reput``,
RocketMQ's ReputMessageService offset) and yields every record that is now whole, with the fields the dispatcher
needs, read with the record module's readers (``protocol.record``: ``SIZE_MAGIC`` for totalSize and magic —
BLANK_MAGIC is the end-of-file filler, go to the next file — and ``index_fields`` for the queue, offsets, sysFlag,
store time, topic and properties).

A record that fails these checks stops the walk (it is logged once); nothing after it is dispatched until the bytes
are replaced (the replica reconnects and the master resends from the replica's end).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from broker.store.file_queue import MappedFileQueue
from protocol.record import BLANK_MAGIC, FIXED_SIZE_V4, MAGIC_V1, SIZE_MAGIC, IndexFields, index_fields

_log = logging.getLogger("rocketq.store.replica")

# (phys, size, what dispatch reads of the record)
ParsedRecord = tuple[int, int, IndexFields]


class ReplicaParser:
    """Finds the whole records among replicated bytes, in commit-log order."""

    __slots__ = ("_bad_at", "queue", "reput")

    def __init__(self, queue: MappedFileQueue, reput: int) -> None:
        self.queue = queue
        self.reput = reput
        self._bad_at = -1

    def records(self) -> Iterator[ParsedRecord]:
        """Every record that became whole since the last call; advances ``reput`` past each one (and past BLANK
        fillers)."""
        q = self.queue
        fsize = q.file_size
        while True:
            off = self.reput
            mf = q.find(off)
            if mf is None:
                return
            pos = off - mf.start
            buf = mf.buf
            if pos + 8 > mf.wrote:
                if mf.wrote == mf.size and pos + 8 > mf.size:  # fewer than 8 bytes left: an old-style file end
                    self.reput = mf.start + fsize
                    continue
                return
            size, magic = SIZE_MAGIC.unpack_from(buf, pos)
            if magic == BLANK_MAGIC:
                if mf.wrote < mf.size:  # the filler is not all here yet
                    return
                self.reput = mf.start + fsize
                continue
            if magic != MAGIC_V1 or size < FIXED_SIZE_V4 or pos + size > mf.size:
                if self._bad_at != off:
                    self._bad_at = off
                    _log.error("replicated bytes at %d are not a record (size %d, magic %d)", off, size, magic)
                return
            if pos + size > mf.wrote:
                return
            f = index_fields(buf, pos)
            self.reput = off + size
            yield off, size, f
