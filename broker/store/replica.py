"""Replica appends: the store side of replication (the HA service in ``broker.ha`` owns the sockets).

A replica (a slave, or a master catching up from a slave that is ahead of it) receives raw commit-log bytes cut at
arbitrary points: a chunk may end in the middle of a record, never crosses a segment file, and includes the BLANK
filler at a file's end. ``ReplicaParser`` walks the bytes appended so far from its own position (``reput``,
RocketMQ's ReputMessageService offset) and yields every record that is now whole, with the fields the dispatcher
needs, read straight from the record layout of ``protocol.message``:

=================  ===========================================================================
what               where (record with IPv4 hosts; +12 per IPv6 host, flagged in sysFlag)
=================  ===========================================================================
totalSize, magic   bytes 0-8; magic BLANK_MAGIC = end-of-file filler → next file
queueId            POS_QUEUEID (12)
queueOffset        POS_QUEUEOFFSET (20)
sysFlag            POS_SYSFLAG (36)
storeTimestamp     ``store_timestamp_pos(sysFlag)``
topic, properties  after the body: int8 topic length + topic, int16 length + properties
=================  ===========================================================================

A record that fails these checks stops the walk (it is logged once); nothing after it is dispatched until the bytes
are replaced (the replica reconnects and the master resends from the replica's end).
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterator
from typing import Final

from broker.store.file_queue import MappedFileQueue
from protocol.message import (
    BLANK_MAGIC,
    FIXED_SIZE_V4,
    I16,
    MAGIC_V1,
    POS_BODYLEN_V4,
    POS_QUEUEID,
    POS_QUEUEOFFSET,
    POS_SYSFLAG,
    SYSFLAG_BORNHOST_V6,
    SYSFLAG_STOREHOST_V6,
    store_timestamp_pos,
)

_log = logging.getLogger("rocketq.store.replica")

SIZE_MAGIC: Final = struct.Struct(">ii")
I32: Final = struct.Struct(">i")
I64: Final = struct.Struct(">q")

# (phys, size, topic, queue_id, queue_offset, sys_flag, store_ts, properties)
ParsedRecord = tuple[int, int, str, int, int, int, int, str]


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
            (sys_flag,) = I32.unpack_from(buf, pos + POS_SYSFLAG)
            (queue_id,) = I32.unpack_from(buf, pos + POS_QUEUEID)
            (queue_offset,) = I64.unpack_from(buf, pos + POS_QUEUEOFFSET)
            (store_ts,) = I64.unpack_from(buf, pos + store_timestamp_pos(sys_flag))
            p = pos + POS_BODYLEN_V4
            if sys_flag & SYSFLAG_BORNHOST_V6:
                p += 12
            if sys_flag & SYSFLAG_STOREHOST_V6:
                p += 12
            (blen,) = I32.unpack_from(buf, p)
            p += 4 + blen
            tlen = buf[p]
            topic = str(buf[p + 1 : p + 1 + tlen], "utf-8")
            p += 1 + tlen
            (plen,) = I16.unpack_from(buf, p)
            props = str(buf[p + 2 : p + 2 + plen], "utf-8")
            self.reput = off + size
            yield off, size, topic, queue_id, queue_offset, sys_flag, store_ts, props
