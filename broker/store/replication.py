"""The store's side of replication, driven by ``broker.ha`` (which owns the sockets): ``read_replication_chunk``
hands out raw log bytes, ``append_replicated`` appends bytes copied from another replica and dispatches every record
that became whole (``replica.ReplicaParser``), ``refuse_puts`` turns puts away (a slave; a master catching up), and
``set_replica_wait`` hooks a SYNC_MASTER's wait for a slave's ack into the put path next to the group-commit flush.

A mixin of ``MessageStore`` over the state it owns (no file of its own).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from broker.store.commitlog import CommitLog
from broker.store.dispatcher import Dispatcher, dispatchable
from broker.store.errors import StoreClosedError
from broker.store.put import Appender
from broker.store.replica import ReplicaParser
from broker.store.request import Appended
from broker.store.results import PutMessageStatus
from broker.store.sealed_ranges import SealedRanges

# replica ack for a put ending at this offset: a status now, or a future of one (broker.ha, SYNC_MASTER)
ReplicaWait = Callable[[int], "PutMessageStatus | asyncio.Future[PutMessageStatus]"]


class StoreReplication:
    """Replica reads and appends over the state ``MessageStore`` owns."""

    _closed: bool
    _seals: SealedRanges
    _queue_offsets: dict[tuple[str, int], int]
    _appender: Appender
    _replica_wait: ReplicaWait | None
    _replica_parser: ReplicaParser | None
    commitlog: CommitLog
    dispatcher: Dispatcher
    puts_refused: str | None
    _durability_changed: Callable[[], None]

    def refuse_puts(self, reason: str | None) -> None:
        """Refuse every put with SERVICE_NOT_AVAILABLE and this remark (a slave; a master catching up from a slave
        that is ahead of it), or accept puts again with None. Reads go on either way."""
        self.puts_refused = reason
        if reason is None:
            self._replica_parser = None  # puts move the end on; a later replica append parses from there

    def set_replica_wait(self, wait: ReplicaWait | None) -> None:
        """Called with the end offset of every put that waits (``wait=True``); answers a status at once (PUT_OK,
        SLAVE_NOT_AVAILABLE) or a future of one (a SYNC_MASTER waiting for a slave's ack)."""
        self._replica_wait = wait
        self._durability_changed()

    def replication_start(self) -> int:
        """Where a replica with an empty log starts copying: the first byte this store still holds."""
        return self.commitlog.min_offset

    def read_replication_chunk(self, offset: int, max_bytes: int) -> bytes | None:
        """Commit-log bytes from ``offset`` to the written end of the segment file holding it, at most
        ``max_bytes`` (a chunk never crosses a file); None when there is nothing there (yet, or any more)."""
        mf = self.commitlog.queue.find(offset)
        if mf is None:
            return None
        pos = offset - mf.start
        end = min(mf.wrote, pos + max_bytes)
        if end <= pos:
            return None
        return bytes(mf.buf[pos:end])

    def append_replicated(self, offset: int, data: bytes | memoryview) -> int:
        """Append raw commit-log bytes copied from another replica at ``offset``, which must be this log's end (or,
        for an empty log, the start of a segment file); ``data`` must not cross a segment file. Every record that
        is now whole is dispatched (consume queues, index, arrival listeners) and takes its queue offset, so this
        store serves pulls and queries of it — and could take puts after it. Returns the new end offset; raises
        ValueError for bytes that do not fit there."""
        if self._closed:
            raise StoreClosedError("store is closed")
        q = self.commitlog.queue
        fsize = q.file_size
        if q.files:
            if offset != q.max_offset:
                raise ValueError(f"replicated bytes at {offset}, but the commit log ends at {q.max_offset}")
            mf = q.files[-1]
            if mf.is_full:
                mf = q.new_file(mf.start + fsize)
        else:
            if offset % fsize:
                raise ValueError(f"an empty commit log can only start at a file boundary, not at {offset}")
            mf = q.new_file(offset)
        if len(data) > mf.size - mf.wrote:
            raise ValueError(f"{len(data)} replicated bytes at {offset} cross the end of file {mf.path}")
        if data:
            self._seals.foreign()
            mf.write(data)
        parser = self._replica_parser
        if parser is None:
            start = max(self.dispatcher.dispatched_offset, q.min_offset)
            parser = self._replica_parser = ReplicaParser(q, start)
        offsets = self._queue_offsets
        appender = self._appender
        submit = self.dispatcher.submit
        for phys, size, f in parser.records():
            if dispatchable(f.sys_flag):
                offsets[(f.topic, f.queue_id)] = f.queue_offset + 1
            if f.store_timestamp > appender.last_store_ts:
                appender.last_store_ts = f.store_timestamp
            submit(Appended(f, f.queue_offset, phys, [size], f.store_timestamp, [f.properties]))
        return q.max_offset

    @property
    def replica_dispatched_offset(self) -> int:
        """How far replicated bytes have been parsed into whole records (the end when nothing is partial)."""
        parser = self._replica_parser
        return parser.reput if parser is not None else self.commitlog.max_offset
