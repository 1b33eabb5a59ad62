"""Background consume-queue rebuild: a damaged queue whose rebuild would walk a large part of the commit log is
rebuilt after start-up, a slice per event-loop iteration, while the broker serves.

Recovery (``recovery.py``) hands over queues whose missing units start more than ``BACKGROUND_BYTES`` before the
scan start. Until each is done:

* its ``rebuilding`` list keeps the units dispatched meanwhile (past its current end); they are written, after
  the rebuilt ones, when the walk reaches the scan start — so queue offsets stay dense and in order;
* a pull at or past its current end is answered OFFSET_OVERFLOW_ONE with the same offset as next begin offset (the
  client retries the same offset; nothing is skipped, no offset is reset) — ``MessageStore.get_message_sync``;
* puts to it are refused (SERVICE_NOT_AVAILABLE, which producers retry on another queue): its next queue offset
  is only known once the walk is done;
* the logics flush holds the checkpoint at its ``rebuild_from``, so a stop before the end redoes it next start;
* deleting its topic drops it from the walk (``forget``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Final

from broker.store.commitlog import CommitLog
from broker.store.consume_queue import MARKER_PHYS, ConsumeQueue
from broker.store.cq_repair import iter_records
from broker.store.dispatcher import dispatchable
from broker.store.integrity import IntegrityReport
from broker.store.results import PutMessageResult, PutMessageStatus
from protocol.message_ext import MessageExt
from protocol.message_properties import tag_hash

_log = logging.getLogger("rocketq.store.cq_rebuild")

BACKGROUND_BYTES: Final = 64 << 20  # a rebuild walking more of the commit log than this runs in the background
SLICE_RECORDS: Final = 2000  # records walked per loop iteration


class BackgroundRebuild:
    def __init__(
        self,
        commitlog: CommitLog,
        queues: list[ConsumeQueue],
        upto: int,
        report: IntegrityReport,
        on_done: Callable[[ConsumeQueue], None],
    ) -> None:
        self._commitlog = commitlog
        self._todo = {(cq.topic, cq.queue_id): cq for cq in queues}
        self._upto = upto
        self._report = report
        self._on_done = on_done
        self._before = {k: cq.max_offset for k, cq in self._todo.items()}
        lo = min((cq.rebuild_from for cq in queues), default=upto)
        self._records: Iterator[tuple[int, MessageExt]] = iter_records(commitlog, lo, upto)
        for cq in queues:
            if cq.rebuilding is None:
                cq.rebuilding = []

    @property
    def pending(self) -> bool:
        return bool(self._todo)

    def busy(self, topic: str, queue_id: int) -> bool:
        return (topic, queue_id) in self._todo

    def forget(self, topics: set[str]) -> None:
        """Stop rebuilding the queues of deleted topics (their files are gone; the walk must not write them)."""
        for key in [k for k in self._todo if k[0] in topics]:
            del self._todo[key]
            del self._before[key]

    @staticmethod
    def refusal(topic: str, queue_id: int) -> PutMessageResult:
        return PutMessageResult(
            PutMessageStatus.SERVICE_NOT_AVAILABLE,
            remark=f"consume queue {topic}-{queue_id} is being rebuilt from the commit log; try another queue",
        )

    def step(self, budget: int = SLICE_RECORDS) -> bool:
        """Walk up to ``budget`` records; finish every queue when the walk is done. True while work is left."""
        todo = self._todo
        for phys, msg in self._records:
            q = todo.get((msg.topic, msg.queue_id))
            if q is not None and dispatchable(msg.sys_flag) and msg.queue_offset >= q.max_offset:
                for missing in range(q.max_offset, msg.queue_offset):  # records of this queue missing from the log
                    q.put_rebuilt(missing, MARKER_PHYS, 1, 0)
                q.put_rebuilt(msg.queue_offset, phys, msg.store_size, tag_hash(msg.tags))
            budget -= 1
            if budget <= 0:
                return True
        for key, cq in list(todo.items()):
            self._finish(cq, self._before[key])
        todo.clear()
        return False

    def _finish(self, cq: ConsumeQueue, before: int) -> None:
        kept = cq.rebuilding or []
        rebuilt = cq.max_offset - before
        for qoff, phys, size, tags in kept:
            for missing in range(cq.max_offset, qoff):  # held by damaged records
                cq.put_rebuilt(missing, MARKER_PHYS, 1, 0)
            cq.put_rebuilt(qoff, phys, size, tags)
        cq.rebuilding = None
        self._report.rebuilt_queues += 1
        self._report.repaired(
            "consume queue %s-%d rebuilt from the commit log in the background: %d units put back",
            cq.topic, cq.queue_id, rebuilt, units=rebuilt,
        )  # fmt: skip
        self._on_done(cq)

    async def run(self) -> None:
        while self.step():
            await asyncio.sleep(0)
