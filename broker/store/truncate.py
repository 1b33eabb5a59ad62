"""Cutting the commit log back at run time: a replica that must follow a new master drops the tail its master
never had (controller mode, ``broker.ha.replicas``). Everything at and after the cut goes — commit-log bytes
(zeroed, later files deleted), consume-queue units pointing there, index files holding entries there (what they
held before the cut is indexed again) — and the
dispatch position, the per-queue next offsets and the checkpoint move back to the cut, so puts and replicated bytes
continue from it and a restart does not resurrect the tail.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from broker.store.checkpoint import Checkpoint, write_checkpoint
from broker.store.commitlog import CommitLog
from broker.store.consume_queue import ConsumeQueue
from broker.store.cq_repair import iter_records, trim_tail
from broker.store.dispatcher import Dispatcher, dispatchable
from broker.store.index import IndexService
from broker.store.integrity import IntegrityReport
from protocol.message_properties import PropertyKey

_log = logging.getLogger("rocketq.store.truncate")


def truncate_log(
    offset: int,
    commitlog: CommitLog,
    queues: Iterable[ConsumeQueue],
    index: IndexService | None,
    dispatcher: Dispatcher,
    checkpoint: tuple[str, Checkpoint],
    report: IntegrityReport,
) -> int:
    """Cut at ``offset`` (a record boundary); returns the bytes dropped. Raises ValueError for an offset below
    what the log still holds."""
    q = commitlog.queue
    end = q.max_offset
    if offset >= end:
        return 0
    if offset < q.min_offset:
        raise ValueError(f"cannot cut the commit log at {offset}: it starts at {q.min_offset}")
    dispatcher.drain()
    dispatcher.discard_from(offset)  # held back by a confirm-offset gate: cut before any consumer saw them
    q.truncate(offset)
    for cq in queues:
        trim_tail(commitlog, cq, offset, report, cut=True)
    if index is not None:
        _cut_index(index, commitlog, offset)
    dispatcher.dispatched_offset = offset
    commitlog.flush()
    path, cp = checkpoint
    if cp.dispatched_offset > offset:
        cp.dispatched_offset = offset
        write_checkpoint(path, cp)
    _log.warning(
        "commit log cut at %d: %d bytes dropped (not held by the master this replica follows)", offset, end - offset
    )
    return end - offset


def _cut_index(index: IndexService, commitlog: CommitLog, offset: int) -> None:
    """Index files holding entries at or past the cut go whole (their hash chains cannot be edited); the records
    before the cut they also held are indexed again from the commit log."""
    index.truncate_beyond(offset)
    last = index.files[-1].end_phy if index.files and index.files[-1].count > 1 else -1
    start = max(last, commitlog.min_offset)
    for phys, msg in iter_records(commitlog, start, offset):
        if phys <= last or not dispatchable(msg.sys_flag):
            continue
        keys = msg.properties.get(PropertyKey.KEYS)
        uniq = msg.properties.get(PropertyKey.UNIQ_KEY)
        if keys or uniq:
            index.put(msg.topic, keys, uniq, phys, msg.store_timestamp)
