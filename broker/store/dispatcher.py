"""Dispatcher (RocketMQ's ReputMessageService): turns commit-log records into consume-queue units and index
entries, then tells the arrival listeners.

It tails the commit log: ``dispatched_offset`` is the commit-log offset up to which every record has been
dispatched, and records are dispatched strictly in commit-log order.

* At run time the put path ``submit``s each append (an ``Appended``: topic, queue, first queue offset, first physical
  offset, record sizes, sysFlag, store time and properties — everything dispatch needs, so nothing is parsed
  again); the first
  submit after a drain schedules one ``drain`` with ``loop.call_soon`` (a callback, not a task woken through an
  Event: no Future, Task step or getpid per put), which runs after the current callback, so the put's reply is
  written first. Puts therefore return without paying for dispatch, and a burst of puts is dispatched in one go;
  a backlog of ``MAX_PENDING`` appends is dispatched inline by the put that reaches it, so memory stays bounded.
  An append to a queue someone waits on (a listener's ``waiting`` probe says so: a held pull) is dispatched inline
  too, with everything before it: the waiter is woken inside the put (a held pull is answered right there, its
  reply written before the put's own).
  Before ``start`` and after ``stop`` nothing is scheduled: reads and ``stop`` drain.
* Reads call ``drain`` first (``MessageStore`` does), so a get that follows a put always sees it, whether or not
  the task has run yet: the store reads its own writes, as the inline dispatch it replaces did.
* At recovery ``redispatch`` re-reads records from the commit log itself (the slow path: each record is decoded).
* For a topic some filtered read registered a kept filter on (``filter_marks.py``: SQL92 selectors), each message is
  judged by it here, from its properties, and the verdict kept per queue offset; other topics pay one dict lookup
  per append, and nothing at all while no filter is registered.

A ``confirmed`` gate (controller mode's master, J's ``getReputEndOffset`` without ``readUnCommitted``) holds back
every append that ends past the offset it returns: consumers see only what the in-sync replicas confirmed, never a
record a deposed master will cut (a deposed master keeps its last confirm offset as the gate until its log is cut
to agree with the new master's). The owner drains again when that offset moves (each replica ack); a cut forgets
the held-back appends past it (``discard_from``).

Prepared and rolled-back transaction messages are stored but never dispatched (only NOT_TYPE and COMMIT reach a
consume queue or the index). Arrival listeners (the broker's long polling, the schedule and pop services) are
called after the units are written, so a woken pull always finds its message: once per message of a single put, and
once per distinct tags code of a batch, for the last message carrying that code (its next offset, code and
properties). A listener that wakes waiters by queue, offset and tags code — every listener here — sees the same
wake-ups either way: a batch has a message with code c past offset o exactly when its last one with c is; the calls
saved are ~0.5 µs per message of a batch. Their ``properties`` argument is a read-only mapping that parses the
properties string only if a listener looks at it.
"""

from __future__ import annotations

import asyncio
import errno
import logging
from collections.abc import Callable, Iterator, Mapping
from itertools import accumulate
from typing import Any, Final, cast

from broker.store.commitlog import CommitLog
from broker.store.consume_queue import MARKER_PHYS, UNIT, UNIT_SIZE, ConsumeQueue
from broker.store.filter_marks import FilterMarks
from broker.store.index import IndexService
from broker.store.request import Appended
from broker.store.struct_runs import repeated
from protocol.message_properties import PropertyKey, decode_properties, get_property, tag_hash
from protocol.record import TRANSACTION_COMMIT_TYPE, TRANSACTION_NOT_TYPE, transaction_type
from protocol.record_decode import decode_record

_log = logging.getLogger("rocketq.store.dispatcher")
_NO_SPACE: Final = frozenset({errno.ENOSPC, errno.EDQUOT})
RETRY_S: Final = 1.0  # a dispatch stalled by a full disk is retried this often (and by every read)


class Arrival:
    """What the dispatcher tells its arrival listeners (the broker's long polling, POP, the schedule and the timer)
    after a message is dispatched: its queue, ``next_offset`` (the queue's max offset after it: its logic offset
    + 1), its tags code, store timestamp and properties. One object per notification, handed to every listener."""

    __slots__ = ("next_offset", "properties", "queue_id", "store_ts", "tags_code", "topic")

    def __init__(
        self,
        topic: str,
        queue_id: int,
        next_offset: int,
        tags_code: int = 0,
        store_ts: int = 0,
        properties: Mapping[str, str] | None = None,
    ) -> None:
        self.topic = topic
        self.queue_id = queue_id
        self.next_offset = next_offset
        self.tags_code = tags_code
        self.store_ts = store_ts
        self.properties = properties


# listener(arrival): one message dispatched
ArrivalListener = Callable[[Arrival], None]
# waiting(topic, queue_id): how many wait for an arrival on that queue (a listener's probe; 0 = nobody)
Waiting = Callable[[str, int], int]

# appends the scheduled drain may lag behind the put path before a put dispatches inline (bounds memory)
MAX_PENDING = 1024

_TAGS = PropertyKey.TAGS
_KEYS = PropertyKey.KEYS
_UNIQ = PropertyKey.UNIQ_KEY


def _prop(props: str, key: str, name: str) -> str | None:
    """One property's value from a properties string (``get_property`` with its common case inline)."""
    i = props.rfind(key)
    if i < 0:
        return None
    if i == 0 or props[i - 1] == "\x02":
        j = props.find("\x02", i)
        return props[i + len(key) : j] if j >= 0 else props[i + len(key) :]
    return get_property(props, name)


def dispatchable(sys_flag: int) -> bool:
    return transaction_type(sys_flag) in (TRANSACTION_NOT_TYPE, TRANSACTION_COMMIT_TYPE)


class LazyProperties(Mapping[str, str]):
    """A message's properties as a mapping, parsed from the stored string on first full use."""

    __slots__ = ("_parsed", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._parsed: dict[str, str] | None = None

    def _dict(self) -> dict[str, str]:
        if self._parsed is None:
            self._parsed = decode_properties(self._text)
        return self._parsed

    def __getitem__(self, key: str) -> str:
        return self._dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())

    def get(self, key: str, default: Any = None) -> Any:
        if self._parsed is None:
            value = get_property(self._text, key)
            return default if value is None else value
        return self._parsed.get(key, default)


class Dispatcher:
    __slots__ = (
        "_cq_factory",
        "_index",
        "_listeners",
        "_topic_listeners",
        "_topic_only",
        "_loop",
        "_pending",
        "_queues",
        "_scheduled",
        "_waiting",
        "confirmed",
        "dispatched_offset",
        "marks",
        "on_stall",
        "stalled",
    )

    def __init__(
        self,
        queues: dict[tuple[str, int], ConsumeQueue],
        cq_factory: Callable[[str, int], ConsumeQueue],
        index: IndexService | None,
    ) -> None:
        self._queues = queues  # the store's open consume queues, looked up here per dispatch
        self._cq_factory = cq_factory  # opens (and registers in ``queues``) a queue not open yet
        self._index = index
        self._listeners: list[ArrivalListener] = []  # told of every topic's arrivals
        self._topic_only: dict[str, list[ArrivalListener]] = {}  # told of one topic's only (the schedule, the timer)
        self._topic_listeners: dict[str, list[ArrivalListener]] = {}  # topic -> every listener it has, in order
        self._waiting: tuple[Waiting, ...] = ()  # the listeners' probes: is anyone waiting on (topic, queue)?
        self._pending: list[Appended] = []
        self._loop: asyncio.AbstractEventLoop | None = None  # set while started: submits schedule a drain on it
        self._scheduled = False  # a drain is scheduled on the loop and has not run yet
        self.dispatched_offset = 0
        self.stalled: OSError | None = None  # the full-disk error dispatch waits on (None: not waiting)
        self.on_stall: Callable[[], None] | None = None  # told when dispatch starts waiting (the put path)
        self.marks = FilterMarks()  # filter verdicts judged at dispatch for the topics read with a kept filter
        self.confirmed: Callable[[], int] | None = None  # the gate: dispatch only up to this commit-log offset

    def add_listener(self, cb: ArrivalListener, waiting: Waiting | None = None, *, topic: str | None = None) -> None:
        """``cb`` after each message is dispatched (with ``topic``: each one of that topic only, and no call for the
        others' messages); with ``waiting``, an append to a queue it reports waiters on (non-zero) is dispatched
        inline by its put."""
        if topic is None:
            self._listeners.append(cb)
        else:
            self._topic_only.setdefault(topic, []).append(cb)
        self._topic_listeners = {t: [*self._listeners, *own] for t, own in self._topic_only.items()}
        if waiting is not None:
            self._waiting = (*self._waiting, waiting)

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    # -- run time --------------------------------------------------------------------------------------------------

    def submit(self, appended: Appended) -> None:
        """Queue one append (a single message or a batch) for dispatch and schedule a drain. When the loop has
        fallen ``MAX_PENDING`` appends behind (puts that never yield to it), the put dispatches inline instead, so
        the backlog — and the heap it holds — stays bounded; and so it does when a listener has waiters on the
        append's queue, so they are woken before the put returns."""
        pending = self._pending
        pending.append(appended)
        now = len(pending) >= MAX_PENDING
        if not now:
            for waiting in self._waiting:
                if waiting(appended.topic, appended.queue_id):
                    now = True
                    break
        if now:
            self.drain()
        elif not self._scheduled and self._loop is not None:
            self._scheduled = True
            self._loop.call_soon(self._scheduled_drain)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._scheduled = False
        if self._pending:
            self._scheduled = True
            self._loop.call_soon(self._scheduled_drain)

    async def stop(self) -> None:
        self._loop = None
        self.drain()

    def discard_from(self, offset: int) -> int:
        """Forget the appends at or past ``offset`` (a record boundary the commit log is cut at) that the gate held
        back; returns how many. They were never dispatched, so no consumer saw them."""
        kept = [a for a in self._pending if a.phys < offset]
        dropped = len(self._pending) - len(kept)
        self._pending = kept
        return dropped

    def _scheduled_drain(self) -> None:
        self._scheduled = False
        if self._loop is not None:  # not stopped meanwhile (stop drains itself)
            self.drain()

    def drain(self) -> int:
        """Dispatch everything submitted so far, in order; returns the number of messages dispatched. A full disk
        (a consume-queue page that cannot get a block) stalls it: the append and all after it stay pending,
        ``stalled`` says why (the put path refuses puts meanwhile) and a retry is scheduled; units already written
        are skipped when it is dispatched again."""
        n = 0
        limit = -1 if self.confirmed is None else self.confirmed()
        if limit >= 0 and self._pending and self._pending[0].end > limit:
            return 0  # nothing confirmed yet: the backlog stays as it is (no copy per put)
        while self._pending:
            batch, self._pending = self._pending, []
            for i, entry in enumerate(batch):
                if limit >= 0 and entry.end > limit:  # not confirmed yet: it waits, and all after it
                    self._pending = batch[i:] + self._pending
                    return n
                try:
                    n += self._dispatch(entry)
                except OSError as exc:
                    if exc.errno not in _NO_SPACE:
                        _log.exception(
                            "dispatch failed at commit-log offset %d (%s-%d)", entry.phys, entry.topic, entry.queue_id
                        )
                        self.dispatched_offset = entry.end
                        continue
                    self._pending = batch[i:] + self._pending
                    if self.stalled is None:
                        _log.warning(
                            "disk full: dispatch waits at commit-log offset %d, puts refused: %s", entry.phys, exc
                        )
                        if self.on_stall is not None:
                            self.on_stall()
                    self.stalled = exc
                    if self._loop is not None and not self._scheduled:
                        self._scheduled = True
                        self._loop.call_later(RETRY_S, self._scheduled_drain)
                    return n
                except Exception:
                    _log.exception(
                        "dispatch failed at commit-log offset %d (%s-%d)", entry.phys, entry.topic, entry.queue_id
                    )
                    self.dispatched_offset = entry.end
        if self.stalled is not None:
            _log.warning("dispatch caught up after a full disk")
            self.stalled = None
        return n

    def _dispatch(self, appended: Appended) -> int:
        topic, queue_id, queue_offset, phys, sizes, sys_flag, store_ts, props_list = (
            appended.topic, appended.queue_id, appended.queue_offset, appended.phys, appended.sizes,
            appended.sys_flag, appended.store_timestamp, appended.properties,
        )  # fmt: skip
        if not dispatchable(sys_flag):
            self.dispatched_offset = phys + sum(sizes)
            return 0
        if len(sizes) > 1:
            return self._dispatch_batch(appended)
        cq = self._queues.get((topic, queue_id)) or self._cq_factory(topic, queue_id)
        index = self._index
        listeners = self._topic_listeners.get(topic, self._listeners) if self._topic_listeners else self._listeners
        marks = self.marks
        judged = marks.topics.get(topic) if marks.topics else None  # None: no filter's verdicts kept for the topic
        for size, props in zip(sizes, props_list, strict=True):
            if isinstance(props, str):
                # the three properties dispatch needs, found in place (get_property, inlined: this runs per message)
                i = props.rfind("TAGS\x01")
                if i < 0:
                    tags = None
                elif i == 0 or props[i - 1] == "\x02":
                    j = props.find("\x02", i)
                    tags = props[i + 5 : j] if j >= 0 else props[i + 5 :]
                else:
                    tags = get_property(props, _TAGS)
                if index is not None:
                    i = props.rfind("KEYS\x01")
                    if i < 0:
                        keys = None
                    elif i == 0 or props[i - 1] == "\x02":
                        j = props.find("\x02", i)
                        keys = props[i + 5 : j] if j >= 0 else props[i + 5 :]
                    else:
                        keys = get_property(props, _KEYS)
                    i = props.rfind("UNIQ_KEY\x01")
                    if i < 0:
                        uniq = None
                    elif i == 0 or props[i - 1] == "\x02":
                        j = props.find("\x02", i)
                        uniq = props[i + 9 : j] if j >= 0 else props[i + 9 :]
                    else:
                        uniq = get_property(props, _UNIQ)
            elif isinstance(props, tuple):
                props, tags, keys, uniq = props
            else:
                tags = props.get(_TAGS)
                keys = props.get(_KEYS)
                uniq = props.get(_UNIQ)
            tags_code = tag_hash(tags) if tags else 0
            # the common case of ConsumeQueue.put, inlined: the next unit of the last file
            files = cq.queue.files
            mf = files[-1] if files else None
            if (
                mf is not None
                and mf.start + mf.wrote == queue_offset * UNIT_SIZE
                and mf.wrote + UNIT_SIZE <= mf.populated
            ):
                UNIT.pack_into(mf.buf, mf.wrote, phys, size, tags_code)
                mf.wrote += UNIT_SIZE
            elif not cq.put(queue_offset, phys, size, tags_code):
                _log.warning(
                    "consume queue gap: %s-%d expects %d, record has %d", topic, queue_id, cq.max_offset, queue_offset
                )
            if index is not None and (keys or uniq):
                index.put(topic, keys, uniq, phys, store_ts)
            if judged:
                marks.on_dispatch(judged, topic, queue_id, queue_offset, props)
            phys += size
            queue_offset += 1
            if listeners:
                self.dispatched_offset = phys
                mapping: Mapping[str, str] = LazyProperties(props) if isinstance(props, str) else props
                arrival = Arrival(topic, queue_id, queue_offset, tags_code, store_ts, mapping)
                for cb in listeners:
                    try:
                        cb(arrival)
                    except Exception:
                        _log.exception("arrival listener failed")
        self.dispatched_offset = phys
        return len(sizes)

    def _dispatch_batch(self, appended: Appended) -> int:
        """A batch's dispatch in one pass over its properties (the three each message may carry; a message's tags
        code, keys and unique key land in columns, no object per message), then its consume-queue units in one
        ``struct`` call (when they follow the last file's end, the common case), its index entries in one loop,
        then the listeners, once per distinct tags code (see the module's docstring)."""
        topic, queue_id, queue_offset, phys = appended.topic, appended.queue_id, appended.queue_offset, appended.phys
        sizes, store_ts, props_list = appended.sizes, appended.store_timestamp, appended.properties
        cq = self._queues.get((topic, queue_id)) or self._cq_factory(topic, queue_id)
        index = self._index
        n = len(sizes)
        physs = list(accumulate(sizes, initial=phys))
        end = physs.pop()
        codes: list[int] | None = None  # None: no message has tags (every code 0)
        keys_l: list[str | None] | None = None  # None: no message has keys
        uniqs: list[str | None] = [None] * n if index is not None else []
        texts: list[str | dict[str, str]] | None = None  # None: the properties are all text (props_list itself)
        indexed = False
        for i in range(n):
            props = props_list[i]
            if isinstance(props, str):
                if "S\x01" in props:  # what both "TAGS\x01" and "KEYS\x01" end with: one scan when neither is there
                    tags = _prop(props, "TAGS\x01", _TAGS)
                    keys = _prop(props, "KEYS\x01", _KEYS) if index is not None else None
                else:
                    tags = keys = None
                if index is not None:
                    uniq = _prop(props, "UNIQ_KEY\x01", _UNIQ)
            else:
                if texts is None:
                    texts = list(cast(list[str], props_list[:i]))
                if isinstance(props, tuple):
                    props, tags, keys, uniq = props
                else:
                    tags, keys, uniq = props.get(_TAGS), props.get(_KEYS), props.get(_UNIQ)
            if texts is not None:
                texts.append(props)
            if tags:
                if codes is None:
                    codes = [0] * n
                codes[i] = tag_hash(tags)
            if index is not None:
                if keys:
                    if keys_l is None:
                        keys_l = [None] * n
                    keys_l[i] = keys
                    indexed = True
                if uniq:
                    uniqs[i] = uniq
                    indexed = True
        texts_l: list[str | dict[str, str]] = (
            texts if texts is not None else cast(list[str | dict[str, str]], props_list)
        )
        files = cq.queue.files
        mf = files[-1] if files else None
        if mf is not None and mf.start + mf.wrote == queue_offset * UNIT_SIZE and mf.wrote + n * UNIT_SIZE <= mf.size:
            flat: list[int] = [0] * (3 * n)  # phys, size, tags code per unit
            flat[0::3] = physs
            flat[1::3] = sizes
            if codes is not None:
                flat[2::3] = codes
            repeated(UNIT, n).pack_into(mf.buf, mf.wrote, *flat)
            mf.wrote += n * UNIT_SIZE
        else:
            for i in range(n):
                if not cq.put(queue_offset + i, physs[i], sizes[i], codes[i] if codes is not None else 0):
                    _log.warning(
                        "consume queue gap: %s-%d expects %d, record has %d",
                        topic, queue_id, cq.max_offset, queue_offset + i,
                    )  # fmt: skip
        if indexed and index is not None:
            index.put_keys(topic, keys_l, uniqs, physs, store_ts)
        marks = self.marks
        judged = marks.topics.get(topic) if marks.topics else None
        if judged:
            for i, text in enumerate(texts_l):
                marks.on_dispatch(judged, topic, queue_id, queue_offset + i, text)
        self.dispatched_offset = end
        listeners = self._topic_listeners.get(topic, self._listeners) if self._topic_listeners else self._listeners
        if listeners:
            if codes is None:
                last = {0: n - 1}
            else:
                last = dict(zip(codes, range(n), strict=True))  # tags code -> its last message (later keys win)
            for i in sorted(last.values()) if len(last) > 1 else last.values():  # in offset order
                code = codes[i] if codes is not None else 0
                text = texts_l[i]
                mapping: Mapping[str, str] = LazyProperties(text) if isinstance(text, str) else text
                arrival = Arrival(topic, queue_id, queue_offset + i + 1, code, store_ts, mapping)
                for cb in listeners:
                    try:
                        cb(arrival)
                    except Exception:
                        _log.exception("arrival listener failed")
        return n

    # -- recovery --------------------------------------------------------------------------------------------------

    def redispatch(
        self,
        commitlog: CommitLog,
        records: list[tuple[int, int]],
        *,
        on_gap: Callable[[ConsumeQueue, int], None] | None = None,
    ) -> int:
        """Dispatch every (offset, size) record at or after ``dispatched_offset`` from the commit log's bytes,
        without notifying listeners; returns how many were done. When a record's queue offset is past its queue's
        end, ``on_gap(cq, phys)`` may put the missing units back first (rebuilt from the log before ``phys``);
        queue offsets still missing after it (their records were quarantined) get marker units."""
        n = 0
        listeners, self._listeners = self._listeners, []
        by_topic, self._topic_listeners = self._topic_listeners, {}
        try:
            for phys, size in records:
                if phys < self.dispatched_offset:
                    continue
                view = commitlog.read(phys, size)
                if view is None:
                    continue
                try:
                    msg, _ = decode_record(view)
                except ValueError as exc:
                    _log.warning("record at %d not dispatched: %s", phys, exc)
                    continue
                if on_gap is not None and dispatchable(msg.sys_flag):
                    cq = self._cq_factory(msg.topic, msg.queue_id)
                    if msg.queue_offset > cq.max_offset and (cq.max_offset > 0 or cq.queue.files):
                        on_gap(cq, phys)
                    gap = msg.queue_offset - cq.max_offset
                    if gap > 0 and (cq.max_offset > 0 or cq.queue.files):
                        _log.warning(
                            "consume queue %s-%d: %d queue offsets from %d held by damaged records, marked",
                            msg.topic, msg.queue_id, gap, cq.max_offset,
                        )  # fmt: skip
                        for q in range(cq.max_offset, msg.queue_offset):
                            cq.put(q, MARKER_PHYS, 1, 0)
                self._dispatch(Appended(msg, msg.queue_offset, phys, [size], msg.store_timestamp, [msg.properties]))
                n += 1
        finally:
            self._listeners = listeners
            self._topic_listeners = by_topic
        return n

    def stats(self) -> dict[str, Any]:
        return {"dispatchedOffset": self.dispatched_offset, "dispatchPending": len(self._pending)}
