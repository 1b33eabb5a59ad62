"""Consume-queue repair: consume queues are derived data, so a damaged one is rebuilt from the commit log rather
than trusted or refused.

* ``rebuild``: queues whose files were short, over-long or had a gap lost their units after the damage; the commit
  log is walked from the end of the last unit they still hold and every record of theirs is put back.
* ``check_units``: every unit must point inside the commit log, in increasing order. A unit that does not (one
  pointing past the end, or out of order with its neighbours) is checked against the record it points at
  (topic, queue id, queue offset); when that is not its record, the record is searched for between the
  neighbouring units' records and the unit rewritten — or, when it is not there, replaced by a marker unit that
  reads skip with a log line. Only consume-queue files are read for the order check; the commit log only for
  suspicious units.
* ``rebuild_index``: index files that were damaged (and every later one) are dropped at load; the records they
  covered are indexed again from the commit log.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from itertools import pairwise

from broker.store.commitlog import CommitLog
from broker.store.consume_queue import MARKER_PHYS, UNIT_SIZE, ConsumeQueue, iter_unit_chunks
from broker.store.dispatcher import dispatchable
from broker.store.index import IndexService
from broker.store.integrity import IntegrityReport
from broker.store.log_scan import check_at, resync
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey, tag_hash
from protocol.record import BLANK, RecordError
from protocol.record_decode import decode_record

_log = logging.getLogger("rocketq.store.cq_repair")


def iter_records(commitlog: CommitLog, lo: int, hi: int) -> Iterator[tuple[int, MessageExt]]:
    """Valid records with ``lo <= offset < hi`` (``lo`` a record boundary), decoded; damage is stepped over."""
    for mf in commitlog.queue.files:
        if mf.start + mf.size <= lo or mf.start >= hi:
            continue
        pos = max(0, lo - mf.start)
        stop = min(mf.size, hi - mf.start, mf.wrote)
        while pos + 8 <= stop:
            try:
                n = check_at(mf, pos, check_crc=True, seals=None)
            except (RecordError, IndexError, ValueError):
                nxt = resync(mf, pos, check_crc=True, seals=None)
                if nxt is None or nxt >= stop:
                    break
                pos = nxt
                continue
            if n == BLANK:
                break
            try:
                msg, _ = decode_record(mf.buf[pos : pos + n])
            except ValueError:
                pos += n
                continue
            yield mf.start + pos, msg
            pos += n
        mf.release(max(0, lo - mf.start), stop)


def rebuild(
    commitlog: CommitLog, queues: Iterable[ConsumeQueue], upto: int, report: IntegrityReport, *, force: bool = True
) -> None:
    """Put back the units damaged queues lost, from the commit log up to ``upto`` (recovery dispatches the rest).
    Reported per queue (always, or with ``force=False`` only when units came back)."""
    todo = {(cq.topic, cq.queue_id): cq for cq in queues}
    if not todo or not commitlog.queue.files:
        return
    lo = upto
    for cq in todo.values():
        lo = min(lo, resume_offset(commitlog, cq, upto))
    before = {k: cq.max_offset for k, cq in todo.items()}
    for phys, msg in iter_records(commitlog, lo, upto):
        q = todo.get((msg.topic, msg.queue_id))
        if q is None or not dispatchable(msg.sys_flag) or msg.queue_offset < q.max_offset:
            continue
        for missing in range(q.max_offset, msg.queue_offset):  # records of this queue missing from the log
            q.put(missing, MARKER_PHYS, 1, 0)
        q.put(msg.queue_offset, phys, msg.store_size, tag_hash(msg.tags))
    for key, cq in todo.items():
        if cq.max_offset == before[key] and not force:
            continue
        report.rebuilt_queues += 1
        report.repaired(
            "consume queue %s-%d rebuilt from the commit log: %d units put back",
            *key,
            cq.max_offset - before[key],
            units=cq.max_offset - before[key],
        )


def resume_offset(commitlog: CommitLog, cq: ConsumeQueue, upto: int) -> int:
    """Where the records after a queue's last sound unit start in the log: the end of the nearest unit from the back
    whose record is its own (``_matching_neighbour``); the log's start when none is. A damaged last unit (pointing
    far past the log, or into another record) must not hide the missing units. The log below ``upto`` is whole:
    this runs before recovery has set how far each file is written."""
    end = _matching_neighbour(commitlog, cq, cq.max_offset, -1, end=upto)
    return commitlog.min_offset if end is None else end


def rebuild_index(commitlog: CommitLog, index: IndexService, lo: int, upto: int, report: IntegrityReport) -> None:
    """Index every record in [lo, upto) again (recovery dispatches the rest) after damaged index files went."""
    n = 0
    for phys, msg in iter_records(commitlog, max(lo, commitlog.min_offset), upto):
        if not dispatchable(msg.sys_flag):
            continue
        keys = msg.properties.get(PropertyKey.KEYS)
        uniq = msg.properties.get(PropertyKey.UNIQ_KEY)
        if keys or uniq:
            index.put(msg.topic, keys, uniq, phys, msg.store_timestamp)
            n += 1
    report.repaired("index rebuilt from the commit log: %d messages indexed again", n)


def check_units(commitlog: CommitLog, cq: ConsumeQueue, end: int, report: IntegrityReport) -> None:
    """Find units that cannot be right (outside the log, out of order) and repair them. Chunks whose units are in
    order and inside the log pass with one comparison per unit."""
    cl_min = commitlog.min_offset
    lo = cq.min_offset
    prev = -1
    suspects: list[int] = []
    for mf in cq.queue.files:
        first = mf.start // UNIT_SIZE
        for i0, vals in iter_unit_chunks(mf.buf, mf.wrote // UNIT_SIZE):
            phys = vals[0::3]
            if prev < phys[0] and phys[-1] < end and all(a < b for a, b in pairwise(phys)):
                prev = phys[-1]
                continue
            for j, p in enumerate(phys):
                if first + i0 + j < lo or p == MARKER_PHYS:
                    continue
                if 0 <= p < cl_min and prev < cl_min:  # the head of the queue, removed by retention
                    prev = max(prev, p)
                    continue
                nxt = phys[j + 1] if j + 1 < len(phys) else end
                if prev < p < nxt and p < end:
                    prev = p
                else:
                    suspects.append(first + i0 + j)
    for qoff in suspects:
        u = cq.unit(qoff)
        if u is not None and not _record_matches(commitlog, cq, qoff, u[0]):
            repair_one(commitlog, cq, qoff, report)


def _record_matches(commitlog: CommitLog, cq: ConsumeQueue, qoff: int, phys: int, end: int | None = None) -> bool:
    """The unit's record at ``phys`` lies below ``end`` (default: what the log has written) and is the queue's
    message ``qoff``. Read from the mapping, so it also serves before recovery has set how far files are written."""
    u = cq.unit(qoff)
    if u is None or phys < 0 or u[1] <= 0 or phys + u[1] > (commitlog.max_offset if end is None else end):
        return False
    mf = commitlog.queue.find(phys)
    if mf is None or phys - mf.start + u[1] > mf.size:
        return False
    pos = phys - mf.start
    try:
        msg, _ = decode_record(mf.buf[pos : pos + u[1]])
    except (ValueError, IndexError):
        return False
    return msg.topic == cq.topic and msg.queue_id == cq.queue_id and msg.queue_offset == qoff


def _matching_neighbour(
    commitlog: CommitLog, cq: ConsumeQueue, qoff: int, step: int, limit: int = 64, end: int | None = None
) -> int | None:
    """Phys of the nearest unit (going ``step``) whose record is really its own, within ``limit`` units (its end
    when going back)."""
    q = qoff + step
    for _ in range(limit):
        if q < cq.min_offset or q >= cq.max_offset:
            return None
        u = cq.unit(q)
        if u is not None and u[0] >= 0 and _record_matches(commitlog, cq, q, u[0], end):
            return u[0] + (u[1] if step < 0 else 0)
        q += step
    return None


_TAIL_SEARCH_MAX = 16 << 20


def trim_tail(commitlog: CommitLog, cq: ConsumeQueue, end: int, report: IntegrityReport, *, cut: bool) -> None:
    """Drop trailing units that point past the commit-log end (their records went with a torn tail) — but a unit
    that cannot be one of those (the log was not cut, or it points nowhere near the end) is looked for first in
    the last 16 MiB before the end, once per queue, and rewritten when its record is there."""
    searched = False
    far = end + 2 * commitlog.file_size
    while True:
        u = cq.last_unit()
        if u is None or u[0] == MARKER_PHYS or u[0] + u[1] <= end:
            return
        qoff = cq.max_offset - 1
        if not searched and (not cut or u[0] < 0 or u[0] >= far):
            searched = True
            prev = cq.unit(qoff - 1) if qoff > cq.min_offset else None
            lo = prev[0] + prev[1] if prev is not None and 0 <= prev[0] < end else commitlog.min_offset
            for phys, msg in iter_records(commitlog, max(lo, end - _TAIL_SEARCH_MAX), end):
                if msg.topic == cq.topic and msg.queue_id == cq.queue_id and msg.queue_offset == qoff:
                    cq.rewrite(qoff, phys, msg.store_size, tag_hash(msg.tags))
                    report.repaired(
                        "consume queue %s-%d unit %d pointed at %s: rewritten to %d from the commit log",
                        cq.topic, cq.queue_id, qoff, u, phys, units=1,
                    )  # fmt: skip
                    break
            else:
                cq.queue.truncate(qoff * UNIT_SIZE)
            continue
        cq.queue.truncate(qoff * UNIT_SIZE)


def repair_one(
    commitlog: CommitLog, cq: ConsumeQueue, qoff: int, report: IntegrityReport
) -> tuple[int, int, int] | None:
    """Find the record of unit ``qoff`` between its good neighbours' records and rewrite the unit; returns the new
    unit, or None (the unit becomes a marker) when the record is not in the log."""
    end = commitlog.max_offset
    lo = _matching_neighbour(commitlog, cq, qoff, -1)
    hi = _matching_neighbour(commitlog, cq, qoff, 1)
    lo = commitlog.min_offset if lo is None else lo
    hi = end if hi is None else hi
    bad = cq.unit(qoff)
    for phys, msg in iter_records(commitlog, lo, hi):
        if msg.topic == cq.topic and msg.queue_id == cq.queue_id and msg.queue_offset == qoff:
            unit = (phys, msg.store_size, tag_hash(msg.tags))
            cq.rewrite(qoff, *unit)
            report.repaired(
                "consume queue %s-%d unit %d pointed at %s: rewritten to %d from the commit log",
                cq.topic, cq.queue_id, qoff, bad, phys, units=1,
            )  # fmt: skip
            return unit
    cq.rewrite(qoff, MARKER_PHYS, 1, 0)
    report.repaired(
        "consume queue %s-%d unit %d pointed at %s and its record is not in the log: marked, reads skip it",
        cq.topic, cq.queue_id, qoff, bad, units=1,
    )  # fmt: skip
    return None
