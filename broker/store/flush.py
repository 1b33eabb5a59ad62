"""Flush policy: asynchronous interval flush, or synchronous flush with group commit.

Every ``fdatasync`` runs in a dedicated single-thread executor (one for the commit log, one for consume queues,
index and checkpoint), never on the event loop.

* ASYNC_FLUSH: ``IntervalFlusher`` syncs the commit log every ``flush_interval_commit_log_ms``; a put returns as
  soon as its records are in the page cache (a process crash loses nothing acknowledged, an OS crash loses up to
  one interval).
* SYNC_FLUSH (group commit, RocketMQ's GroupCommitService): a put ``request``s the flush of its end offset and
  awaits the returned future. One sync runs at a time: it takes the log's current write position, runs ONE
  ``fdatasync`` covering everything up to it, and resolves every waiter at or below it. Puts made while a sync runs
  wait for the next one, which starts as soon as this one returns — so N concurrent producers share each fsync,
  and the loop keeps appending while the disk works. A waiter not covered within
  ``sync_flush_timeout_ms`` gets False (FLUSH_DISK_TIMEOUT); as in RocketMQ its data may still become durable.
  Timeouts cost one timer per sync round, not one per put.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Callable

from broker.store.stats import Histogram
from broker.store.waiters import OffsetWaiters
from protocol.tasks import stop_tasks

_log = logging.getLogger("rocketq.store.flush")


class GroupCommit:
    """SYNC_FLUSH group commit. At most one sync is in flight; the next starts the moment it returns if anyone is
    waiting, or the moment someone asks when idle — from callbacks, not a task, so a sync is never queued behind the
    producers it is about to release. Producers released by one sync append during the next: the disk and the event
    loop work in parallel. The waiters are an ``OffsetWaiters`` (shared with the SYNC_MASTER wait)."""

    def __init__(
        self,
        flush_fn: Callable[[], int],
        executor: concurrent.futures.Executor,
        timeout_s: float,
        *,
        flushed: int = 0,
        sizes: Histogram | None = None,
    ) -> None:
        self._sizes = sizes  # puts released per sync (the group-commit size), when given
        self._flush_fn = flush_fn
        self._executor = executor
        self._timeout = timeout_s
        self._waiters: OffsetWaiters[bool] = OffsetWaiters(True, False)
        self._inflight: asyncio.Future[int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped = False
        self.flushed = flushed
        self.fsyncs = 0

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._waiters.start(self._loop)

    def request(self, end: int) -> asyncio.Future[bool] | None:
        """A future that becomes True once the commit log is durable up to ``end`` (False on timeout or a failed
        sync); None when it already is. Call right after the append, with no await in between."""
        if end <= self.flushed:
            return None
        if self._loop is None or self._stopped:
            raise RuntimeError("group commit not running")
        fut = self._waiters.add(end, self._timeout)
        if self._inflight is None:
            self._launch()
        return fut

    async def wait_flushed(self, end: int) -> bool:
        fut = self.request(end)
        return True if fut is None else await fut

    def _launch(self) -> None:
        loop = self._loop
        assert loop is not None
        inflight = loop.run_in_executor(self._executor, self._flush_fn)
        self._inflight = inflight
        inflight.add_done_callback(self._on_flushed)

    def _on_flushed(self, inflight: asyncio.Future[int]) -> None:
        self._inflight = None
        if inflight.cancelled():
            self._waiters.fail_all(False)
            return
        exc = inflight.exception()
        if exc is not None:
            _log.error("group commit flush failed: %r", exc)
            self._waiters.fail_all(False)
        else:
            self.fsyncs += 1
            self._resolve(inflight.result())
        if self._waiters and not self._stopped:
            self._launch()

    def _resolve(self, flushed: int) -> None:
        if flushed > self.flushed:
            self.flushed = flushed
        released = self._waiters.release(flushed)
        if released and self._sizes is not None:
            self._sizes.observe(released)

    async def stop(self) -> None:
        """Stop after the sync in flight and one last sync: waiters they cover get True, any others False."""
        self._stopped = True
        if self._inflight is not None:
            try:
                await asyncio.shield(self._inflight)
            except Exception:
                pass
        if self._waiters:
            try:
                flushed = await asyncio.get_running_loop().run_in_executor(self._executor, self._flush_fn)
            except Exception:
                _log.exception("group commit final flush failed")
            else:
                self._resolve(flushed)
        self._waiters.fail_all(False)


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
