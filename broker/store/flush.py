"""Flush policy: asynchronous interval flush, or synchronous flush with group commit.

Every ``fdatasync`` runs off the event loop: the interval flushers in single-thread executors (one for the commit
log, one for consume queues, index and checkpoint), the group commit on its own flush thread — unless the broker
is configured ``groupCommitInline=true`` (the last item below).

* ASYNC_FLUSH: ``IntervalFlusher`` syncs the commit log every ``flush_interval_commit_log_ms``; a put returns as
  soon as its records are in the page cache (a process crash loses nothing acknowledged, an OS crash loses up to
  one interval).
* SYNC_FLUSH (group commit, RocketMQ's GroupCommitService): a put ``request``s the flush of its end offset and
  awaits the returned future. One sync runs at a time: it takes the log's current write position, runs ONE
  ``fdatasync`` covering everything up to it, and resolves every waiter at or below it. Puts made while a sync runs
  wait for the next one, which the flush thread starts as soon as this one returns — so N concurrent producers
  share each fsync, and the loop keeps appending while the disk works. An idle flush thread is woken once at the
  end of the loop iteration that asked, so the puts of every frame read in that iteration share the first sync.
  A waiter not covered within ``sync_flush_timeout_ms`` gets False (FLUSH_DISK_TIMEOUT); as in RocketMQ its data
  may still become durable. Timeouts cost one timer for all waiters, not one per put. A waiter is a future
  (``request``) or a callback (``request_callback``: the send handler's deferred reply, written by the release).
* SYNC_FLUSH with ``groupCommitInline`` (off by default): the one exception to "off the event loop". The sync runs
  ON the loop, at the end of each loop iteration that appended (Redis ``appendfsync always``): every frame read in
  that iteration shares the fdatasync and its puts are answered right after it, in the same iteration. No thread
  hand-off, and no contention with the loop for the GIL and the CPU, which on a small machine costs the flush thread
  more than the sync itself (measured on 2 cores: one sync ~0.45 ms from the thread under 32 concurrent senders,
  ~0.2 ms inline, and 1.2-1.45x the acknowledged sends/s inline). The price: the loop, so every client of the
  broker, waits while the disk syncs, for as long as the disk takes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from broker.store.stats import Histogram
from broker.store.waiters import OffsetWaiters
from runtime.tasks import stop_tasks

_log = logging.getLogger("rocketq.store.flush")
T = TypeVar("T")


class GroupCommit:
    """SYNC_FLUSH group commit on a dedicated flush thread. The loop only records the highest end a put waits for
    (``wanted``) and, when the thread is idle, wakes it once at the end of the loop iteration (``call_soon``: every
    frame read in that iteration has appended by then, so one sync covers them all). The thread then syncs
    back to back while ``wanted`` is ahead of what it flushed: each ``fdatasync`` covers everything appended up
    to its start, and the next one starts the moment it returns, with no round trip through the loop — the loop
    keeps appending while the disk works. After each sync it wakes the loop once (``call_soon_threadsafe``), which
    resolves every waiter up to the synced offset. The waiters are an ``OffsetWaiters`` (shared with the
    SYNC_MASTER wait): one future per put, one timer for all deadlines.

    With ``inline`` there is no thread: the end-of-iteration wake runs the sync on the loop itself and releases its
    waiters at once (module docstring)."""

    def __init__(
        self,
        flush_fn: Callable[[], int],
        timeout_s: float,
        *,
        flushed: int = 0,
        sizes: Histogram | None = None,
        inline: bool = False,
    ) -> None:
        self._inline = inline  # sync on the loop at the end of the iteration, no flush thread
        self._sizes = sizes  # puts released per sync (the group-commit size), when given
        self._flush_fn = flush_fn
        self._timeout = timeout_s
        self._waiters: OffsetWaiters[bool] = OffsetWaiters(True, False)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._wake: queue.SimpleQueue[None] = queue.SimpleQueue()
        # shared with the thread (plain attribute reads and writes, under the GIL):
        self._wanted = flushed  # highest end a waiter asked for (loop writes, thread reads)
        self._idle = True  # the thread is waiting for a wake (both write; see _sync_loop for the handshake)
        self._kick_due = False  # a wake is scheduled for the end of this loop iteration (loop only)
        self._stopped = False
        self._done: asyncio.Future[None] | None = None
        self.flushed = flushed
        self.fsyncs = 0

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._waiters.start(self._loop)
        if self._inline:
            return
        self._thread = threading.Thread(target=self._sync_loop, name="store-group-commit", daemon=True)
        self._thread.start()

    def request(self, end: int) -> asyncio.Future[bool] | None:
        """A future that becomes True once the commit log is durable up to ``end`` (False on timeout or a failed
        sync); None when it already is. Call right after the append, with no await in between."""
        if end <= self.flushed:
            return None
        self._want(end)
        return self._waiters.add(end, self._timeout)

    def request_callback(self, end: int, cb: Callable[[bool], None]) -> bool:
        """Like ``request``, but ``cb(durable)`` is called on the loop instead of a future resolved: True when it
        will be, False (and never called) when ``end`` already is durable."""
        if end <= self.flushed:
            return False
        self._want(end)
        self._waiters.add_callback(end, self._timeout, cb)
        return True

    def _want(self, end: int) -> None:
        """Record that a waiter needs ``end`` durable and, unless one is due already or the thread is syncing, have
        the end of this loop iteration start a sync (``_kick``). Raises RuntimeError when not running."""
        loop = self._loop
        if loop is None or self._stopped:
            raise RuntimeError("group commit not running")
        if end > self._wanted:
            self._wanted = end
        if self._idle and not self._kick_due:
            self._kick_due = True
            loop.call_soon(self._kick)

    async def wait_flushed(self, end: int) -> bool:
        fut = self.request(end)
        return True if fut is None else await fut

    def _kick(self) -> None:
        self._kick_due = False
        if self._inline:
            self._sync_inline()
            return
        if self._idle and self._wanted > self.flushed:
            self._idle = False
            self._wake.put(None)

    def _sync_inline(self) -> None:
        """The inline mode's sync, on the loop: everything appended so far, then its waiters answered."""
        if self._stopped or self._wanted <= self.flushed:
            return
        try:
            flushed = self._flush_fn()
        except Exception as exc:  # as on the thread: its waiters get False, the next request syncs again
            self._on_failed(exc)
            return
        self._on_flushed(flushed)

    def _sync_loop(self) -> None:
        """The flush thread: sleep until woken, then sync until nothing asked for is left unflushed; after a stop,
        finish what was asked (``request`` takes no more) and exit."""
        loop = self._loop
        assert loop is not None
        flushed = posted = self.flushed
        while True:
            self._wake.get()
            while True:
                try:
                    flushed = self._flush_fn()
                except Exception as exc:  # a failed sync fails its waiters; the next request wakes us again
                    self._idle = True  # before the loop hears of it, so a put it answers first can wake us
                    if not _post(loop, self._on_failed, exc):
                        return
                    break
                if flushed != posted:  # a wake that found nothing new to sync posts nothing
                    posted = flushed
                    if not _post(loop, self._on_flushed, flushed):
                        return
                if self._wanted > flushed:
                    continue
                # going idle: a request that saw _idle False before this line set _wanted first, so re-read it
                self._idle = True
                if self._wanted > flushed:
                    self._idle = False
                    continue
                break
            if self._stopped:
                break
        done = self._done
        if done is not None:
            _post(loop, _set_done, done)

    def _on_flushed(self, flushed: int) -> None:
        self.fsyncs += 1
        if flushed > self.flushed:
            self.flushed = flushed
        released = self._waiters.release(flushed)
        if released and self._sizes is not None:
            self._sizes.observe(released)

    def _on_failed(self, exc: BaseException) -> None:
        _log.error("group commit flush failed: %r", exc)
        self._waiters.fail_all(False)

    async def stop(self) -> None:
        """Stop once the flush thread has finished the syncs asked for: waiters they cover get True (their
        ``_on_flushed`` runs first: the loop runs the thread's callbacks in order), any others False."""
        if self._stopped:
            return
        if self._inline:  # a wake still due: its sync runs now, so what was asked before the stop is answered
            self._sync_inline()
        done = None
        if self._thread is not None:
            done = self._done = asyncio.get_running_loop().create_future()  # before _stopped: the thread reads both
        self._stopped = True
        if done is not None:
            self._wake.put(None)
            await done
            self._thread = None
        self._waiters.fail_all(False)


def _post(loop: asyncio.AbstractEventLoop, cb: Callable[[T], None], arg: T) -> bool:
    """``cb(arg)`` on the loop, from the flush thread; False when the loop is closed (a store never stopped):
    nobody is left to answer, and the thread ends."""
    try:
        loop.call_soon_threadsafe(cb, arg)
    except RuntimeError:
        return False
    return True


def _set_done(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def timed_flush(flush_fn: Callable[[], int], latency_ms: Histogram, flushed: int) -> Callable[[], int]:
    """``flush_fn`` (returns the flushed offset, ``flushed`` now) that records its duration when it advanced."""
    last = [flushed]

    def flush() -> int:
        t0 = time.perf_counter()
        now = flush_fn()
        if now != last[0]:
            latency_ms.observe((time.perf_counter() - t0) * 1000.0)
            last[0] = now
        return now

    return flush


class IntervalFlusher:
    """Calls ``flush_fn`` in the executor every ``interval_s`` (the async-flush commit log, consume queues)."""

    def __init__(
        self, name: str, flush_fn: Callable[[], object], executor: concurrent.futures.Executor, interval_s: float
    ) -> None:
        self._name = name
        self._flush_fn = flush_fn
        self._executor = executor
        self._interval = interval_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=self._name)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self._interval)
            try:
                await loop.run_in_executor(self._executor, self._flush_fn)
            except Exception:
                _log.exception("%s failed", self._name)

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_tasks(task)
