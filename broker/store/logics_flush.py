"""Logics flush: makes consume queues and the index durable, batched, and writes the checkpoint and the marks.

Runs in the store's logics executor (blocking I/O, never on the event loop). As RocketMQ's FlushConsumeQueueService
(``flushConsumeQueueLeastPages`` = 2, ``flushConsumeQueueThoroughInterval``), a regular pass ``fdatasync``s only the
consume queues with at least ``LEAST_PAGES`` dirty pages; a thorough pass (every ``THOROUGH_S`` seconds, and at
close) syncs every dirty one. With hundreds of queues each getting a few units a second, a pass costs a handful of
syncs instead of one per queue.

The checkpoint's dispatched offset must stay a point below which every consume-queue unit is durable, so a pass that
leaves a queue dirty holds it at the physical offset of that queue's first unsynced unit (units are in commit-log
order within a queue). The marks (``cq_marks.py``) record each queue's durable unit count.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Final

from broker.store.checkpoint import Checkpoint, write_checkpoint
from broker.store.commitlog import CommitLog
from broker.store.consume_queue import UNIT_SIZE, ConsumeQueue
from broker.store.cq_marks import Marks, write_marks
from broker.store.index import IndexService
from broker.store.mapped_file import PAGE

LEAST_PAGES: Final = 2
THOROUGH_S: Final = 10.0


class LogicsFlush:
    def __init__(
        self,
        root: str,
        queues: Mapping[tuple[str, int], ConsumeQueue],
        index: IndexService | None,
        commitlog: CommitLog,
        checkpoint: Checkpoint,
        dispatched: Callable[[], int],
        clock: Callable[[], float],
    ) -> None:
        self._root = root
        self._queues = queues
        self._index = index
        self._commitlog = commitlog
        self._checkpoint = checkpoint
        self._dispatched = dispatched
        self._clock = clock
        self._last_thorough = time.monotonic()
        self._marks: Marks = {}
        self.syncs = 0  # consume-queue files synced (tests, bench)

    def run(self, *, thorough: bool) -> None:
        """One pass (blocking). ``thorough``: sync every dirty queue (close); otherwise only queues with enough
        dirty pages, unless the thorough interval has passed."""
        now = time.monotonic()
        if not thorough and now - self._last_thorough >= THOROUGH_S:
            thorough = True
        if thorough:
            self._last_thorough = now
        hold = self._dispatched()
        least = LEAST_PAGES * PAGE
        marks: Marks = {}
        for key, cq in list(self._queues.items()):
            if cq.rebuilding is not None:  # rebuilt in the background: redone from there if we stop first
                hold = min(hold, cq.rebuild_from)
            q = cq.queue
            files = q.files
            dirty = sum(mf.wrote - mf.flushed for mf in files[-2:] if mf.wrote > mf.flushed)
            if dirty and not thorough and dirty < least:
                first = q.flushed_offset // UNIT_SIZE
                u = cq.unit(first)
                if u is not None and u[0] >= 0:
                    hold = min(hold, u[0])
                    marks[key] = first
                    continue
            if dirty:
                self.syncs += sum(1 for mf in files if mf.flushed < mf.wrote)
            marks[key] = q.flush() // UNIT_SIZE
        if self._index is not None:
            self._index.flush()
        cp = self._checkpoint
        stamp = int(self._clock() * 1000)
        cp.dispatched_offset = min(hold, self._commitlog.flushed_offset)
        cp.logics_msg_timestamp = stamp
        cp.physic_msg_timestamp = stamp
        cp.index_msg_timestamp = stamp
        write_checkpoint(os.path.join(self._root, "checkpoint"), cp)
        if marks != self._marks:
            write_marks(self._root, marks)
            self._marks = marks
