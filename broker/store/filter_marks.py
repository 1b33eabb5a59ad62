"""Filter verdicts kept per consume-queue entry, so a filtered read of messages already judged costs what an
unfiltered one does.

RocketMQ's ``enableCalcFilterBitMap`` evaluates the SQL92 expressions of the consumer groups registered for a topic
once, at dispatch (``CommitLogDispatcherCalcBitMap``), and stores a bloom bitmap of the matching groups with each
consume-queue entry (``ConsumeQueueExt``); a pull then skips entries whose bitmap says "no" without reading the
commit log, but still evaluates the expression on the entries it reads. Here the verdict kept is exact, so neither a
non-matching entry nor a matching one is evaluated again:

* a filtered read (``GetRequest.marks``, a ``MarkSpec``: a key naming the filter's semantics, e.g. the SQL92 text,
  and the same test over a message's properties) registers the key for the topic; from then on dispatch evaluates
  it once per message of that topic and keeps the verdict under the key, per (topic, queue, queue offset);
* the read takes the verdicts of the units it scans: an entry marked ``MISS`` is skipped like a tag-hash miss, one
  marked ``MATCH`` is served without the record test, an unknown one (sent before the key was registered, after a
  restart, or older than the window kept) is tested as before and its verdict kept. When every scanned unit is a
  known match, the read runs with no filter at all.

Verdicts live in memory only (one byte per entry; ``WINDOW`` entries per queue and key at most, the newest), so a
restart or a long backlog only costs the first read its evaluation. A key no read has used for ``IDLE_S`` is dropped
(its dispatch work stops); a topic has at most ``MAX_KEYS`` (reads of further filters test every record). A topic with no registered key costs dispatch one dict lookup per append, and nothing
when no key is registered at all. A queue cut back (truncation, a deleted and re-created topic) drops the verdicts
past its end on the next read; units re-dispatched at those offsets overwrite theirs.

========== ===== ============================================
verdict    byte  meaning
========== ===== ============================================
``UNKNOWN`` 0    not judged: the read tests the record
``MATCH``   1    the filter keeps the message
``MISS``    2    the filter drops it
========== ===== ============================================
"""

from __future__ import annotations

import logging
import time
from typing import Final

from broker.store.request import MarkSpec, Properties, PropertiesTest

_log = logging.getLogger("rocketq.store.filter_marks")

UNKNOWN: Final = 0
MATCH: Final = 1
MISS: Final = 2
_UNKNOWN_B: Final = bytes((UNKNOWN,))
_MISS_B: Final = bytes((MISS,))
WINDOW: Final = 1 << 20  # verdicts kept per queue and key (1 MiB), the newest
_ROOM_BELOW: Final = 1 << 16
IDLE_S: Final = 600.0  # a key no read used for this long stops being evaluated at dispatch
MAX_KEYS: Final = 32  # keys judged at dispatch per topic; reads with more distinct filters evaluate every record


class QueueMarks:
    """The verdicts of one queue under one key: ``bits[i]`` is the verdict of queue offset ``base + i``; ``used``
    (when a filter registration made it) is told of reads."""

    __slots__ = ("base", "bits", "used")

    def __init__(self, base: int, used: _Registered | None = None) -> None:
        self.base = base
        self.bits = bytearray()
        self.used = used

    @property
    def end(self) -> int:
        return self.base + len(self.bits)

    def set(self, queue_offset: int, verdict: int) -> None:
        bits = self.bits
        i = queue_offset - self.base
        n = len(bits)
        if i == n:
            bits.append(verdict)
        elif 0 <= i < n:
            bits[i] = verdict
        elif i > n:
            if i - n > WINDOW:  # far ahead of what is kept: start over there
                self.base, self.bits = queue_offset, bytearray((verdict,))
                return
            bits.extend(bytes(i - n))
            bits.append(verdict)
        else:  # older than the window: not kept
            return
        if len(bits) > WINDOW:
            drop = len(bits) - WINDOW + WINDOW // 4
            del bits[:drop]
            self.base += drop

    def all_match(self, queue_offset: int, count: int) -> bool:
        """Whether the ``count`` entries from ``queue_offset`` are all known matches (no copy)."""
        lo = queue_offset - self.base
        hi = lo + count
        bits = self.bits
        return lo >= 0 and hi <= len(bits) and bits.find(_UNKNOWN_B, lo, hi) < 0 and bits.find(_MISS_B, lo, hi) < 0

    def window(self, queue_offset: int, count: int) -> bytes | bytearray:
        """The verdicts of ``count`` entries from ``queue_offset`` (``UNKNOWN`` where none is kept)."""
        lo = queue_offset - self.base
        hi = lo + count
        if lo >= 0 and hi <= len(self.bits):  # the common case: one copy
            return self.bits[lo:hi]
        got = bytes(self.bits[max(lo, 0) : max(hi, 0)])
        if lo < 0:
            got = bytes(min(-lo, count)) + got
        if len(got) < count:
            got += bytes(count - len(got))
        return got

    def cut(self, end: int) -> None:
        """Forget the verdicts at and past queue offset ``end``."""
        if end < self.end:
            del self.bits[max(end - self.base, 0) :]


class _Registered:
    __slots__ = ("test", "used")

    def __init__(self, test: PropertiesTest, used: float) -> None:
        self.test = test
        self.used = used


class FilterMarks:
    """The keys registered per topic and the verdicts kept per (topic, queue, key)."""

    __slots__ = ("_last_sweep", "_queues", "topics")

    def __init__(self) -> None:
        # topic → key → its properties test; read by the dispatcher (empty: no dispatch work at all)
        self.topics: dict[str, dict[str, _Registered]] = {}
        # (topic, queue, key) → its verdicts; an entry exists only while its key is registered for the topic
        self._queues: dict[tuple[str, int, str], QueueMarks] = {}
        self._last_sweep = time.monotonic()

    def for_read(self, topic: str, queue_id: int, spec: MarkSpec, max_offset: int) -> QueueMarks | None:
        """The verdicts a filtered read of (topic, queue) uses and fills; registers ``spec`` for the topic. None when
        the topic has ``MAX_KEYS`` other keys already (the read then tests every record, as without verdicts)."""
        now = time.monotonic()
        if now - self._last_sweep > 60.0:
            self._sweep(now)
        qm = self._queues.get((topic, queue_id, spec.key))
        if qm is not None:  # the common case: registered, verdicts there
            if qm.used is not None:
                qm.used.used = now
            if qm.base + len(qm.bits) > max_offset:  # the queue was cut back (or re-created): not its entries'
                qm.cut(max_offset)
            return qm
        keys = self.topics.get(topic)
        if keys is None:
            keys = self.topics[topic] = {}
        reg = keys.get(spec.key)
        if reg is None:
            if len(keys) >= MAX_KEYS:
                return None
            reg = keys[spec.key] = _Registered(spec.test, now)
            _log.info("filter verdicts kept at dispatch for topic %s: %s", topic, spec.key)
        else:
            reg.used = now
        qm = self._queues[(topic, queue_id, spec.key)] = QueueMarks(max(max_offset - WINDOW, 0), reg)
        return qm

    def on_dispatch(
        self, keys: dict[str, _Registered], topic: str, queue_id: int, queue_offset: int, props: Properties
    ) -> None:
        """Judge one dispatched message under every key registered for its topic (``keys``)."""
        queues = self._queues
        for key, reg in keys.items():
            qk = (topic, queue_id, key)
            qm = queues.get(qk)
            if qm is None:  # room below for the verdicts reads will find for the messages already there
                qm = queues[qk] = QueueMarks(max(queue_offset - _ROOM_BELOW, 0), reg)
            try:
                ok = reg.test(props)
            except Exception:  # the test is total; should it not be, the read decides
                _log.exception("filter %s failed at dispatch", key)
                qm.set(queue_offset, UNKNOWN)
                continue
            qm.set(queue_offset, MATCH if ok else MISS)

    def forget(self, topics: set[str]) -> None:
        """Deleted topics: their keys and verdicts go."""
        for topic in topics:
            self.topics.pop(topic, None)
        for qk in [qk for qk in self._queues if qk[0] in topics]:
            del self._queues[qk]

    def drop(self, topic: str, key: str) -> None:
        """Stop keeping ``key``'s verdicts for ``topic`` (and forget those kept)."""
        keys = self.topics.get(topic)
        if keys is not None:
            keys.pop(key, None)
            if not keys:
                del self.topics[topic]
        for qk in [qk for qk in self._queues if qk[0] == topic and qk[2] == key]:
            del self._queues[qk]

    def _sweep(self, now: float) -> None:
        self._last_sweep = now
        for topic, keys in list(self.topics.items()):
            for key in [k for k, reg in keys.items() if now - reg.used > IDLE_S]:
                self.drop(topic, key)
                _log.info("filter verdicts no longer kept for topic %s: %s (unused)", topic, key)

    def stats(self) -> dict[str, int]:
        return {
            "filterKeys": sum(len(k) for k in self.topics.values()),
            "filterVerdicts": sum(len(q.bits) for q in self._queues.values()),
        }
