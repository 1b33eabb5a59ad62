"""StoreReads: the read side of ``MessageStore`` — PULL gets and the offset, time, id and key lookups.

The get path reads consume-queue units and returns one ``bytes`` object holding the matching records back to back
(a PULL reply body), sliced straight out of the mapped commit log, with RocketMQ's statuses and next-offset rules.
Records below ``_trusted_from`` (not verified by this run's recovery or scrub yet) are checked on the way: a damaged
one, or a unit pointing at a record that is not its own, is repaired when its record can be found near it and
skipped with one log line (and a quarantine copy) otherwise.

Every read first dispatches whatever is still queued, so it sees every put that returned before it.

A mixin: ``MessageStore`` owns the state declared below and sets it up; this module only reads it (and counts).
"""

from __future__ import annotations

import logging

from broker.store.commitlog import CommitLog
from broker.store.config import StoreConfig
from broker.store.consume_queue import MARKER_PHYS, UNIT, UNIT_SIZE, ConsumeQueue
from broker.store.contiguous_read import record_runs
from broker.store.cq_repair import repair_one
from broker.store.dispatcher import Dispatcher
from broker.store.errors import StoreClosedError
from broker.store.filter_marks import MATCH, MISS
from broker.store.index import IndexService
from broker.store.integrity import IntegrityReport
from broker.store.quarantine import Quarantine
from broker.store.record_check import check_read, verify
from broker.store.request import GetRequest
from broker.store.results import ConsumeQueueSlice, ConsumeQueueUnit, GetMessageResult, GetMessageStatus
from broker.store.sealed_ranges import SealedRanges
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey
from protocol.record import record_store_timestamp, record_tags
from protocol.record_decode import decode_record

_log = logging.getLogger("rocketq.store")

# RocketMQ scans at most max(16000 bytes, maxMsgNums * 20) of consume-queue units per get
_MAX_SCAN_UNITS = 16000 // UNIT_SIZE


class StoreReads:
    """Gets and lookups over the state ``MessageStore`` owns."""

    _config: StoreConfig
    _queues: dict[tuple[str, int], ConsumeQueue]
    _closed: bool
    _trusted_from: int
    _seals: SealedRanges
    _bad_logged: set[int]
    _quarantine: Quarantine
    commitlog: CommitLog
    dispatcher: Dispatcher
    index: IndexService | None
    integrity: IntegrityReport
    get_count: int

    # -- get -------------------------------------------------------------------------------------------------------

    async def get_message(self, req: GetRequest) -> GetMessageResult:
        """See ``get_message_sync`` (this only makes it awaitable for the handlers)."""
        return self.get_message_sync(req)

    def get_message_sync(self, req: GetRequest) -> GetMessageResult:
        """RocketMQ's DefaultMessageStore.getMessage: statuses and nextBeginOffset corrections (as a master).

        ``req.filter``'s ``match_code`` gets each unit's tags hash (the consume-queue pre-filter); ``match_tags``
        the record's TAGS string and ``match_record`` the whole record (both after it is read from the commit log).
        With its ``marks`` the record filter's verdicts kept per entry (``filter_marks.py``) decide first: a known
        miss is skipped unread, a known match is not tested again, and an all-match scan runs unfiltered.
        Filtered units count as scanned. The reply holds up to ``max_msgs`` (capped by
        maxTransferCountOnMessageInMemory) whole records and stops before ``max_bytes`` would be passed, but always
        holds one if it found one."""
        topic, queue_id, offset, max_msgs, max_bytes = req.topic, req.queue_id, req.offset, req.max_msgs, req.max_bytes
        f = req.filter
        if f is None:
            message_filter = tags_filter = record_filter = marks = None
        else:
            message_filter, tags_filter, record_filter, marks = f.match_code, f.match_tags, f.match_record, f.marks
        if self._closed:
            raise StoreClosedError("store is closed")
        if self.dispatcher.pending:
            self.dispatcher.drain()
        cfg = self._config
        max_bytes = cfg.max_transfer_bytes_on_message_in_memory if max_bytes is None else max_bytes
        max_msgs = max(1, min(max_msgs, cfg.max_transfer_count_on_message_in_memory))
        cq = self._queues.get((topic, queue_id))
        if cq is None:
            return GetMessageResult(GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, 0, 0, 0)
        min_off = cq.min_offset
        max_off = cq.max_offset
        if cq.rebuilding is not None and offset >= max_off:  # not rebuilt that far yet: the client retries it
            return GetMessageResult(GetMessageStatus.OFFSET_OVERFLOW_ONE, offset, min_off, max_off)
        if max_off == 0:
            return GetMessageResult(GetMessageStatus.NO_MESSAGE_IN_QUEUE, 0, min_off, max_off)
        if offset < min_off:
            return GetMessageResult(GetMessageStatus.OFFSET_TOO_SMALL, min_off, min_off, max_off)
        if offset == max_off:
            return GetMessageResult(GetMessageStatus.OFFSET_OVERFLOW_ONE, offset, min_off, max_off)
        if offset > max_off:
            nxt = min_off if min_off == 0 else max_off
            return GetMessageResult(GetMessageStatus.OFFSET_OVERFLOW_BADLY, nxt, min_off, max_off)
        got = cq.read(offset, max(_MAX_SCAN_UNITS, max_msgs))
        if got is None:
            return GetMessageResult(GetMessageStatus.OFFSET_FOUND_NULL, cq.roll_next_file(offset), min_off, max_off)
        units, count = got
        verdicts = None  # the kept verdicts of the scanned units (filter_marks.py), when the filter has them
        qm = None
        if marks is not None and record_filter is not None and cq.rebuilding is None:
            qm = self.dispatcher.marks.for_read(topic, queue_id, marks, max_off)
            if qm is not None and qm.all_match(offset, count):  # all known matches: read unfiltered
                message_filter = tags_filter = record_filter = None
                qm = None
            elif qm is not None:
                verdicts = qm.window(offset, count)
        if message_filter is None and tags_filter is None and record_filter is None:
            whole = self._contiguous_get(cq, units, count, offset, max_msgs, max_bytes)
            if whole is not None:
                return GetMessageResult(
                    GetMessageStatus.FOUND, offset + whole[1], min_off, max_off, whole[0], whole[1],
                    list(range(offset, offset + whole[1])),
                )  # fmt: skip
        status = GetMessageStatus.NO_MATCHED_MESSAGE
        parts: list[memoryview] = []
        qoffs: list[int] = []
        total = 0
        commitlog = self.commitlog
        cl_min = commitlog.min_offset
        trusted = self._trusted_from
        next_phy_file_start = -1
        i = 0
        for phys, size, tags_code in UNIT.iter_unpack(units):
            if parts and (len(parts) >= max_msgs or total + size > max_bytes):
                break
            i += 1
            if next_phy_file_start >= 0 and phys < next_phy_file_start:
                continue
            test = record_filter
            if verdicts is not None:
                known = verdicts[i - 1]
                if known == MISS:
                    continue
                if known == MATCH:
                    test = None
            if message_filter is not None and not message_filter(tags_code):
                continue
            view = commitlog.read(phys, size) if phys >= cl_min and size > 0 else None
            if view is None:
                if phys == MARKER_PHYS:
                    self._skip_damaged(topic, queue_id, offset + i - 1, phys, "record quarantined or missing")
                    continue
                if 0 <= phys < cl_min:  # a removed file: J's skip to the next file
                    if not parts:
                        status = GetMessageStatus.MESSAGE_WAS_REMOVING
                    next_phy_file_start = commitlog.roll_next_file(phys)
                    continue
                # a bogus unit (outside the log): find its record near its neighbours' and rewrite it, or skip it
                fixed = self._repair_unit(cq, offset + i - 1)
                if fixed is None:
                    self._skip_damaged(topic, queue_id, offset + i - 1, phys, "unit points outside the commit log")
                    continue
                phys, size, view = fixed
            if (phys < trusted or offset + i <= cq.checked_below) and not self._checked(cq, offset + i - 1):
                if not self._record_ok(view, topic, queue_id, offset + i - 1, phys):
                    fixed = self._repair_unit(cq, offset + i - 1)
                    if fixed is None:
                        continue
                    phys, size, view = fixed
                lo, hi = cq.verified
                cq.verified = (lo, hi + 1) if hi == offset + i - 1 else (offset + i - 1, offset + i)
            if tags_filter is not None and not tags_filter(record_tags(view)):
                continue
            if test is not None:
                ok = test(view)
                if qm is not None:
                    qm.set(offset + i - 1, MATCH if ok else MISS)
                if not ok:
                    continue
            parts.append(view)
            qoffs.append(offset + i - 1)
            total += size
            status = GetMessageStatus.FOUND
            next_phy_file_start = -1
        self.get_count += len(parts)
        buffer = b"".join(parts) if parts else b""
        return GetMessageResult(status, offset + i, min_off, max_off, buffer, len(parts), qoffs)

    def _contiguous_get(
        self, cq: ConsumeQueue, units: memoryview, count: int, offset: int, max_msgs: int, max_bytes: int
    ) -> tuple[bytes, int] | None:
        """The unfiltered get's reply as runs of back-to-back records, one commit-log slice each
        (``contiguous_read``): (records, count), or None when a run is not in one file or a record still needs its
        read check (the general loop below checks it)."""
        got = record_runs(units, count, max_msgs, max_bytes)
        if got is None or got.lowest < self.commitlog.min_offset:
            return None
        last = offset + got.records
        if got.lowest < self._trusted_from or offset < cq.checked_below:
            lo, hi = cq.verified
            if not lo <= offset < last <= hi:
                return None
        views: list[memoryview] = []
        for phys, size in got.runs:  # one per run of back-to-back records, not per record
            view = self.commitlog.read(phys, size)
            if view is None:
                return None
            views.append(view)
        self.get_count += got.records
        return (bytes(views[0]) if len(views) == 1 else b"".join(views)), got.records

    @staticmethod
    def _checked(cq: ConsumeQueue, qoff: int) -> bool:
        lo, hi = cq.verified
        return lo <= qoff < hi

    def _record_ok(self, view: memoryview, topic: str, queue_id: int, qoff: int, phys: int) -> bool:
        """Full check of a record recovery did not verify: valid, and the one the unit says (queue and offset)."""
        reason = check_read(view, queue_id, qoff, require_seal=self._seals.rule(phys))
        if reason is None:
            return True
        self._skip_damaged(topic, queue_id, qoff, phys, reason)
        return False

    def _repair_unit(self, cq: ConsumeQueue, qoff: int) -> tuple[int, int, memoryview] | None:
        """A unit whose record is not its own: look for the right record near it (rewrite the unit) or mark it."""
        unit = repair_one(self.commitlog, cq, qoff, self.integrity)
        if unit is None:
            return None
        view = self.commitlog.read(unit[0], unit[1])
        if view is None or check_read(view, cq.queue_id, qoff, require_seal=self._seals.rule(unit[0])) is not None:
            return None
        return unit[0], unit[1], view

    def _skip_damaged(self, topic: str, queue_id: int, qoff: int, phys: int, reason: str) -> None:
        self.integrity.skipped_reads += 1
        if phys not in self._bad_logged:  # once per record, not per pull
            if len(self._bad_logged) < 100_000:
                self._bad_logged.add(phys)
            size = self.commitlog.read_size(phys) if phys >= self.commitlog.min_offset else None
            view = self.commitlog.read(phys, size) if size is not None and 0 < size <= 1 << 22 else None
            if view is not None:
                self._quarantine.keep(phys, view, len(view), f"read check: {reason}")
            _log.warning(
                "damaged message skipped: %s-%d queue offset %d at commit-log offset %d: %s",
                topic, queue_id, qoff, phys, reason,
            )  # fmt: skip

    # -- offsets and lookups ---------------------------------------------------------------------------------------

    def _queue(self, topic: str, queue_id: int) -> ConsumeQueue | None:
        if self.dispatcher.pending:
            self.dispatcher.drain()
        return self._queues.get((topic, queue_id))

    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        """The queue offset the next message will get (= messages ever dispatched to it); 0 for no queue."""
        cq = self._queue(topic, queue_id)
        return cq.max_offset if cq is not None else 0

    def queue_unit_position(self, topic: str, queue_id: int, queue_offset: int) -> int | None:
        """The commit-log offset of the message at ``queue_offset`` of the queue; None when there is none."""
        cq = self._queue(topic, queue_id)
        unit = cq.unit(queue_offset) if cq is not None else None
        return None if unit is None else unit[0]

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        cq = self._queue(topic, queue_id)
        return cq.min_offset if cq is not None else 0

    def _store_time_at(self, phys: int, size: int) -> int | None:
        view = self.commitlog.read(phys, size)
        if view is None:
            return None
        return record_store_timestamp(view)

    def _unit_store_time(self, cq: ConsumeQueue, qoff: int) -> int | None:
        u = cq.unit(qoff)
        return None if u is None else self._store_time_at(u[0], u[1])

    async def get_offset_in_queue_by_time(
        self, topic: str, queue_id: int, timestamp: int, *, upper: bool = False
    ) -> int:
        return self.get_offset_in_queue_by_time_sync(topic, queue_id, timestamp, upper=upper)

    def get_offset_in_queue_by_time_sync(
        self, topic: str, queue_id: int, timestamp: int, *, upper: bool = False
    ) -> int:
        """J 5.x ``ConsumeQueue.getOffsetInQueueByTime(timestamp, boundaryType)`` over the live units (a binary search
        by store time), as Apache RocketMQ 5.5.0 answers it:

        | boundary        | a unit stored at ``timestamp`` | none stored at it       | after every unit | before every unit |
        |-----------------|--------------------------------|-------------------------|------------------|-------------------|
        | LOWER (default) | the first of them              | the first one after it  | the max offset   | the min offset    |
        | UPPER           | the last of them               | the last one before it  | max offset - 1   | 0                 |

        LOWER is what SEARCH_OFFSET_BY_TIMESTAMP answers without a boundaryType and what resetOffsetByTime uses;
        UPPER is for the end of a time range. 0 for no queue or an empty one; a queue whose every unit was removed
        is "after every unit"."""
        cq = self._queue(topic, queue_id)
        if cq is None:
            return 0
        lo, hi = cq.min_offset, cq.max_offset
        if hi == 0:
            return 0
        while lo < hi:  # the first live unit stored after ``timestamp`` (UPPER) or at/after it (LOWER)
            mid = (lo + hi) // 2
            ts = self._unit_store_time(cq, mid)
            if ts is None or ts < timestamp or (upper and ts == timestamp):  # None: removed under us
                lo = mid + 1
            else:
                hi = mid
        if not upper:
            return lo
        return 0 if lo == cq.min_offset < cq.max_offset else lo - 1

    async def get_earliest_message_time(self, topic: str, queue_id: int) -> int:
        """Store time of the queue's first live message; -1 when there is none."""
        cq = self._queue(topic, queue_id)
        if cq is None:
            return -1
        ts = self._unit_store_time(cq, cq.min_offset)
        return -1 if ts is None else ts

    def get_message_store_timestamp(self, topic: str, queue_id: int, queue_offset: int) -> int:
        """Store time of the message at ``queue_offset``; -1 when it is not (or no longer) there."""
        cq = self._queue(topic, queue_id)
        ts = self._unit_store_time(cq, queue_offset) if cq is not None else None
        return -1 if ts is None else ts

    def read_consume_queue(self, topic: str, queue_id: int, index: int, count: int) -> ConsumeQueueSlice | None:
        """Raw units of one consume queue from queue offset ``index``: at most ``count`` of them, and never past the
        end of the consume-queue file that holds ``index`` (J ``ConsumeQueue.getIndexBuffer``). None when the queue
        does not exist; no units when ``index`` is outside the live range or ``count`` < 1."""
        cq = self._queue(topic, queue_id)
        if cq is None:
            return None
        units: list[ConsumeQueueUnit] = []
        got = cq.read(index, count) if index >= 0 and count > 0 else None
        if got is not None:
            units = [ConsumeQueueUnit(int(p), int(s), int(t)) for p, s, t in UNIT.iter_unpack(got[0])]
        return ConsumeQueueSlice(cq.min_offset, cq.max_offset, units)

    def get_commit_log_max_offset(self) -> int:
        return self.commitlog.max_offset

    def get_commit_log_min_offset(self) -> int:
        return self.commitlog.min_offset

    def select_one_message_by_offset(self, phys: int, size: int | None = None) -> bytes | None:
        """The stored record at physical offset ``phys`` (VIEW_MESSAGE_BY_ID body); None when there is none."""
        if phys < self.commitlog.min_offset:
            return None
        if size is None:
            size = self.commitlog.read_size(phys)
            if size is None or size <= 0:
                return None
        view = self.commitlog.read(phys, size)
        if view is None:
            return None
        if phys < self._trusted_from:
            try:
                verify(view, 0, require_seal=self._seals.rule(phys))
            except ValueError as exc:  # RecordError included
                _log.warning("damaged message not served: commit-log offset %d: %s", phys, exc)
                self.integrity.skipped_reads += 1
                return None
        return bytes(view)

    def look_message_by_offset(self, phys: int) -> MessageExt | None:
        raw = self.select_one_message_by_offset(phys)
        if raw is None:
            return None
        try:
            return decode_record(raw)[0]
        except ValueError:
            return None

    def query_message(self, topic: str, key: str, max_num: int, begin: int, end: int) -> list[bytes]:
        """Stored records of ``topic`` whose KEYS contain ``key`` or whose UNIQ_KEY is ``key`` and whose store time
        is in [begin, end] (ms), newest first, at most ``max_num``."""
        if self.index is None:
            return []
        if self.dispatcher.pending:
            self.dispatcher.drain()
        out: list[bytes] = []
        for phys in self.index.query(topic, key, max_num * 2, begin, end):
            raw = self.select_one_message_by_offset(phys)
            if raw is None:
                continue
            try:
                msg = decode_record(raw)[0]
            except ValueError:
                continue
            if msg.topic == topic and (key in msg.keys or msg.properties.get(PropertyKey.UNIQ_KEY) == key):
                out.append(raw)
                if len(out) >= max_num:
                    break
        return out

    def topics_and_queues(self) -> dict[str, list[int]]:
        if self.dispatcher.pending:
            self.dispatcher.drain()
        out: dict[str, list[int]] = {}
        for topic, qid in self._queues:
            out.setdefault(topic, []).append(qid)
        return out
