"""OffsetWaiters: puts waiting for an offset (durable end, slave ack) to reach the end of what they wrote.

The one structure behind SYNC_FLUSH group commit (``flush.GroupCommit``) and SYNC_MASTER (``broker.ha.master``'s
GroupTransfer): waiters sit in one deque in put order, so their ends and deadlines are both non-decreasing; an
advance resolves every waiter it covers in one pass from the left, and one timer serves every deadline — no task
and no timer per put. Stdlib only, so the HA side may use it through the store.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Generic, TypeVar

T = TypeVar("T")


class OffsetWaiters(Generic[T]):
    def __init__(self, ok: T, timed_out: T) -> None:
        self._ok = ok
        self._timed_out = timed_out
        self._q: collections.deque[tuple[int, asyncio.Future[T], float]] = collections.deque()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.timeouts = 0

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def __len__(self) -> int:
        return len(self._q)

    def add(self, end: int, timeout_s: float) -> asyncio.Future[T]:
        """A future that gets ``ok`` once ``release`` reaches ``end``, or ``timed_out`` after ``timeout_s``.
        ``end`` must not be below an earlier waiter's (put order)."""
        loop = self._loop
        if loop is None:
            raise RuntimeError("waiters not started")
        fut: asyncio.Future[T] = loop.create_future()
        deadline = loop.time() + timeout_s
        self._q.append((end, fut, deadline))
        if self._timer is None:
            self._timer = loop.call_at(deadline, self._expire)
        return fut

    def release(self, upto: int) -> int:
        """Resolve every waiter whose end is at or below ``upto`` with ``ok``; returns how many were."""
        q = self._q
        n = 0
        while q and q[0][0] <= upto:
            fut = q.popleft()[1]
            n += 1
            if not fut.done():
                fut.set_result(self._ok)
        if not q and self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return n

    def fail_all(self, value: T) -> None:
        """Resolve every waiter with ``value`` (a failed sync, a stop)."""
        q = self._q
        while q:
            fut = q.popleft()[1]
            if not fut.done():
                fut.set_result(value)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        """Timer: answer the waiters whose deadline has passed; re-arm for the next one."""
        assert self._loop is not None
        now = self._loop.time()
        q = self._q
        while q and q[0][2] <= now:
            fut = q.popleft()[1]
            if not fut.done():
                self.timeouts += 1
                fut.set_result(self._timed_out)
        self._timer = self._loop.call_at(q[0][2], self._expire) if q else None
