"""OffsetWaiters: puts waiting for an offset (durable end, slave ack) to reach the end of what they wrote.

The one structure behind SYNC_FLUSH group commit (``flush.GroupCommit``) and SYNC_MASTER (``broker.ha.master``'s
GroupTransfer): waiters sit in one deque in put order, so their ends and deadlines are both non-decreasing; an
advance resolves every waiter it covers in one pass from the left, and one timer serves every deadline — no task
and no timer per put. A waiter is a future (``add``) or a plain callback (``add_callback``: a SYNC_FLUSH send whose
reply the release itself writes, with no coroutine to wake); a callback that raises is logged and costs only its
own waiter. Stdlib only, so the HA side may use it through the store.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
_log = logging.getLogger("rocketq.store.waiters")


def _settle(fut: asyncio.Future[T], value: T) -> None:
    if not fut.done():  # a cancelled waiter
        fut.set_result(value)


def _answer(cb: Callable[[T], None], value: T) -> None:
    """One waiter's answer; a callback that raises is logged and costs only its own waiter."""
    try:
        cb(value)
    except Exception:
        _log.exception("offset waiter failed")


class OffsetWaiters(Generic[T]):
    def __init__(self, ok: T, timed_out: T) -> None:
        self._ok = ok
        self._timed_out = timed_out
        self._q: collections.deque[tuple[int, Callable[[T], None], float]] = collections.deque()
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
        self.add_callback(end, timeout_s, functools.partial(_settle, fut))
        return fut

    def add_callback(self, end: int, timeout_s: float, cb: Callable[[T], None]) -> None:
        """``cb(ok)`` once ``release`` reaches ``end``, or ``cb(timed_out)`` after ``timeout_s`` (or ``cb`` of a
        ``fail_all`` value); called exactly once, on the loop. ``end`` as for ``add``."""
        loop = self._loop
        if loop is None:
            raise RuntimeError("waiters not started")
        deadline = loop.time() + timeout_s
        self._q.append((end, cb, deadline))
        if self._timer is None:
            self._timer = loop.call_at(deadline, self._expire)

    def release(self, upto: int) -> int:
        """Resolve every waiter whose end is at or below ``upto`` with ``ok``; returns how many were."""
        q = self._q
        n = 0
        ok = self._ok
        while q and q[0][0] <= upto:
            _answer(q.popleft()[1], ok)
            n += 1
        if not q and self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return n

    def fail_all(self, value: T) -> None:
        """Resolve every waiter with ``value`` (a failed sync, a stop)."""
        q = self._q
        while q:
            _answer(q.popleft()[1], value)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        """Timer: answer the waiters whose deadline has passed; re-arm for the next one."""
        assert self._loop is not None
        now = self._loop.time()
        q = self._q
        while q and q[0][2] <= now:
            self.timeouts += 1
            _answer(q.popleft()[1], self._timed_out)
        self._timer = self._loop.call_at(q[0][2], self._expire) if q else None
