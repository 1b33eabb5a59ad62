"""ProcessQueue: the messages pulled for one queue and not yet consumed — pure state, no IO, no asyncio.

* The offset to commit is the smallest queue offset still in flight or, when nothing is, one past the largest ever
  taken: a slow message holds the commit back, so a crash or a rebalance re-delivers it rather than losing it
  (at-least-once; RocketMQ's ``removeMessage`` / ``ackIndex`` by smallest offset).
* Counts, bytes and the offset span feed flow control (``pull_threshold_for_queue``,
  ``pull_threshold_size_for_queue``, ``consume_concurrently_max_span``): the pull loop pauses while
  ``must_pause`` says so and resumes once consumption brings the queue below.
* Consume start times let the consumer find messages stuck in a listener longer than ``consume_timeout``
  (``expired``): they are sent back and removed so they stop holding the offset.
* Orderly consumption takes the lowest offsets in order (``take_in_order``) and removes them once consumed.

Time comes in as arguments (``now``), so everything here is testable without a clock.
"""

from __future__ import annotations

import time

from protocol.message_ext import MessageExt


class ProcessQueue:
    __slots__ = (
        "_msgs",
        "_ordered",
        "_started",
        "bytes",
        "consuming",
        "dropped",
        "last_consume",
        "last_pull",
        "lock_time",
        "locked",
        "max_offset_taken",
    )

    def __init__(self) -> None:
        self._msgs: dict[int, MessageExt] = {}  # insertion order = offset order while ``_ordered``
        self._ordered = True
        self._started: dict[int, float] = {}  # queue offset → when its listener call started
        self.bytes = 0
        self.dropped = False
        self.last_pull = time.monotonic()
        self.last_consume = 0.0
        self.max_offset_taken = -1
        self.locked = False
        self.lock_time = 0.0
        self.consuming = False

    def __len__(self) -> int:
        return len(self._msgs)

    def __contains__(self, offset: int) -> bool:
        return offset in self._msgs

    def put(self, msgs: list[MessageExt]) -> int:
        """Add pulled messages (a message already held is ignored); returns how many were new."""
        held = self._msgs
        last = next(reversed(held)) if held else -1  # the offset added last
        top = self.max_offset_taken
        added = size = 0
        for m in msgs:  # per message: locals only
            off = m.queue_offset
            if off not in held:
                if off < last:
                    self._ordered = False  # pulls come in offset order; anything else falls back to min/max
                held[off] = m
                last = off
                size += len(m.body)
                added += 1
            if off > top:
                top = off
        self.bytes += size
        self.max_offset_taken = top
        return added

    def remove(self, msgs: list[MessageExt]) -> int:
        """Forget consumed messages; returns the offset safe to commit now (-1 if nothing was ever taken)."""
        held = self._msgs
        started = self._started
        size = 0
        for m in msgs:
            off = m.queue_offset
            gone = held.pop(off, None)
            if gone is not None:
                size += len(gone.body)
                started.pop(off, None)
        self.bytes -= size
        return self.commit_offset()

    def commit_offset(self) -> int:
        if self._msgs:
            return next(iter(self._msgs)) if self._ordered else min(self._msgs)
        self._ordered = True
        return self.max_offset_taken + 1 if self.max_offset_taken >= 0 else -1

    def span(self) -> int:
        """Largest minus smallest offset in flight (0 when one or none)."""
        if not self._msgs:
            return 0
        if self._ordered:
            return next(reversed(self._msgs)) - next(iter(self._msgs))
        return max(self._msgs) - min(self._msgs)

    def must_pause(self, max_count: int, max_bytes: int, max_span: int | None = None) -> str | None:
        """Why the pull loop must wait before pulling more (None: it may pull)."""
        if len(self._msgs) >= max_count:
            return "count"
        if self.bytes >= max_bytes:
            return "size"
        if max_span is not None and self.span() > max_span:
            return "span"
        return None

    def mark_started(self, msgs: list[MessageExt], now: float) -> None:
        self.last_consume = now
        held = self._msgs
        started = self._started
        for m in msgs:
            off = m.queue_offset
            if off in held:
                started[off] = now

    def expired(self, now: float, timeout: float, limit: int = 16) -> list[MessageExt]:
        """Up to ``limit`` messages, lowest offsets first, whose listener call started ``timeout`` s ago or more
        (J ``cleanExpiredMsg`` looks at the first 16)."""
        out = []
        for off in sorted(self._started)[:limit]:
            if now - self._started[off] >= timeout and off in self._msgs:
                out.append(self._msgs[off])
        return out

    def take_in_order(self, n: int) -> list[MessageExt]:
        """Orderly consumption: the ``n`` lowest offsets (they stay in flight until ``remove``)."""
        return [self._msgs[k] for k in sorted(self._msgs)[:n]]

    def clear(self) -> None:
        self._ordered = True
        self._msgs.clear()
        self._started.clear()
        self.bytes = 0

    def info(self, wall_ms: int, mono: float) -> dict[str, object]:
        """J ``ProcessQueueInfo`` for GET_CONSUMER_RUNNING_INFO; monotonic times become wall-clock ms through the
        pair (``wall_ms``, ``mono``) read together. No transactional consumption here: those fields are 0."""

        def wall(t: float) -> int:
            return max(0, int(wall_ms - (mono - t) * 1000)) if t else 0

        return {
            "commitOffset": self.commit_offset(),
            "cachedMsgMinOffset": min(self._msgs) if self._msgs else 0,
            "cachedMsgMaxOffset": max(self._msgs) if self._msgs else 0,
            "cachedMsgCount": len(self._msgs),
            "cachedMsgSizeInMiB": self.bytes // (1 << 20),
            "transactionMsgMinOffset": 0,
            "transactionMsgMaxOffset": 0,
            "transactionMsgCount": 0,
            "locked": self.locked,
            "tryUnlockTimes": 0,
            "lastLockTimestamp": wall(self.lock_time),
            "droped": self.dropped,
            "lastPullTimestamp": wall(self.last_pull),
            "lastConsumeTimestamp": wall(self.last_consume),
        }
