"""Flush policy: asynchronous interval flush, or synchronous flush with group commit.

All msync/fsync calls run in one dedicated single-thread executor, never on the event loop.

* ASYNC_FLUSH: a task msyncs the commit log every ``flush_interval_commit_log_ms``; a put returns at once.
* SYNC_FLUSH (group commit): a put awaits ``wait_flushed(end)``. A single flusher task takes every waiter queued
  so far, runs ONE msync covering the highest end among them, and resolves them all — so N concurrent producers
  share one fsync. A waiter not covered within ``sync_flush_timeout_ms`` gets False (FLUSH_DISK_TIMEOUT); its data
  may still become durable, as in RocketMQ.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable

_log = logging.getLogger("rocketq.store.flush")


class GroupCommit:
    def __init__(self, flush_fn: Callable[[], int], executor: concurrent.futures.Executor, timeout_s: float) -> None:
        self._flush_fn = flush_fn
        self._executor = executor
        self._timeout = timeout_s
        self._waiters: list[tuple[int, asyncio.Future[bool]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._flushed = 0
        self.fsyncs = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="store-group-commit")

    async def wait_flushed(self, end: int) -> bool:
        if end <= self._flushed:
            return True
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append((end, fut))
        self._wake.set()
        try:
            return await asyncio.wait_for(asyncio.shield(fut), self._timeout)
        except TimeoutError:
            return False

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._waiters = self._waiters, []
            if not batch:
                continue
            try:
                self._flushed = await loop.run_in_executor(self._executor, self._flush_fn)
                self.fsyncs += 1
            except Exception:
                _log.exception("group commit flush failed")
                for _end, fut in batch:
                    if not fut.done():
                        fut.set_result(False)
                continue
            for end, fut in batch:
                if fut.done():
                    continue
                if end <= self._flushed:
                    fut.set_result(True)
                else:  # appended after the flush started: next round
                    self._waiters.append((end, fut))
                    self._wake.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        for _end, fut in self._waiters:
            if not fut.done():
                fut.set_result(False)
        self._waiters = []


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
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
