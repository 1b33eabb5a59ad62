"""Dispatcher: turns commit-log records into consume-queue units and index entries, then tells listeners.

At run time the store hands each append to ``dispatch`` straight away (the fields are known, nothing is re-parsed);
at recovery ``redispatch_from`` re-reads records from the commit log. Prepared and rolled-back transaction messages
are stored but never dispatched (only NOT_TYPE and COMMIT reach a consume queue). Arrival listeners (the broker's
long polling) are called after the unit is written, so a woken pull always finds the message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from broker.store.commitlog import CommitLog
from broker.store.consume_queue import ConsumeQueue
from broker.store.index import IndexService
from protocol.message import (
    TRANSACTION_COMMIT_TYPE,
    TRANSACTION_NOT_TYPE,
    PropertyKey,
    decode_record,
    tag_hash,
    transaction_type,
)

_log = logging.getLogger("rocketq.store.dispatcher")

# listener(topic, queue_id, max_offset_after, tags_code, store_timestamp, properties)
ArrivalListener = Callable[[str, int, int, int, int, dict[str, str]], None]


def dispatchable(sys_flag: int) -> bool:
    return transaction_type(sys_flag) in (TRANSACTION_NOT_TYPE, TRANSACTION_COMMIT_TYPE)


class Dispatcher:
    __slots__ = ("_cq_factory", "_index", "_listeners", "dispatched_offset")

    def __init__(self, cq_factory: Callable[[str, int], ConsumeQueue], index: IndexService | None) -> None:
        self._cq_factory = cq_factory
        self._index = index
        self._listeners: list[ArrivalListener] = []
        self.dispatched_offset = 0

    def add_listener(self, cb: ArrivalListener) -> None:
        self._listeners.append(cb)

    def dispatch(
        self,
        topic: str,
        queue_id: int,
        queue_offset: int,
        phys: int,
        size: int,
        sys_flag: int,
        store_ts: int,
        props: dict[str, str],
        *,
        notify: bool = True,
    ) -> None:
        if dispatchable(sys_flag):
            tags_code = tag_hash(props.get(PropertyKey.TAGS))
            cq = self._cq_factory(topic, queue_id)
            if not cq.put(queue_offset, phys, size, tags_code):
                _log.warning(
                    "consume queue gap: %s-%d expects %d, record has %d", topic, queue_id, cq.max_offset, queue_offset
                )
            if self._index is not None:
                keys = props.get(PropertyKey.KEYS)
                uniq = props.get(PropertyKey.UNIQ_KEY)
                if keys or uniq:
                    self._index.put(topic, [k for k in keys.split(" ") if k] if keys else [], uniq, phys, store_ts)
            if notify and self._listeners:
                max_offset = queue_offset + 1
                for cb in self._listeners:
                    try:
                        cb(topic, queue_id, max_offset, tags_code, store_ts, props)
                    except Exception:
                        _log.exception("arrival listener failed")
        self.dispatched_offset = phys + size

    def redispatch(self, commitlog: CommitLog, records: list[tuple[int, int]]) -> int:
        """Dispatch every (offset, size) record at or after ``dispatched_offset``; returns how many were done."""
        n = 0
        for phys, size in records:
            if phys < self.dispatched_offset:
                continue
            view = commitlog.read(phys, size)
            if view is None:
                continue
            msg, _ = decode_record(view)
            self.dispatch(
                msg.topic,
                msg.queue_id,
                msg.queue_offset,
                phys,
                size,
                msg.sys_flag,
                msg.store_timestamp,
                msg.properties,
                notify=False,
            )
            n += 1
        return n

    def stats(self) -> dict[str, Any]:
        return {"dispatchedOffset": self.dispatched_offset}
