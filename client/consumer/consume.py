"""How pulled messages reach the listener: concurrently (any order, many calls in flight) or orderly (one queue at
a time, in offset order, under the queue's broker lock). The consumer provides the hooks (``ConsumeHooks``).

Concurrent (J ``ConsumeMessageConcurrentlyService``):

* pulled messages are cut into batches of ``consume_message_batch_max_size`` and queued; ``consume_thread_max``
  workers call the listener;
* SUCCESS removes the batch from the process queue and moves the offset to the smallest offset still in flight;
* RECONSUME_LATER, an exception or ``None`` sends each message back (CONSUMER_SEND_MSG_BACK: the broker
  re-delivers it through ``%RETRY%<group>`` after 10 s, 30 s, 1 m… and to ``%DLQ%<group>`` after
  ``max_reconsume_times``); a message whose send-back fails stays in flight and is consumed again locally after 5 s;
  broadcasting consumers drop failed messages (nobody else could re-deliver them);
* every ``consume_timeout`` minutes, messages whose listener call started longer ago than that are sent back at
  delay level 3 and removed, so one stuck call cannot hold the offset forever.

Orderly (J ``ConsumeMessageOrderlyService``):

* one drain task per queue takes the lowest offsets, calls the listener and only then takes the next batch;
* SUSPEND_CURRENT_QUEUE_A_MOMENT / RECONSUME_LATER / an exception retries the same batch after
  ``suspend_current_queue_time_ms``; a message that reached ``max_reconsume_times`` goes to the DLQ and the queue
  moves on (so a poison message stalls only its own queue, and not for ever);
* clustering consumers consume a queue only while they hold its broker lock (LOCK_BATCH_MQ), renewed every 20 s
  (the broker expires locks after 60 s).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from client._aio import every, log_stop_failure
from client._log import get_logger
from client.config import PushConsumerConfig
from client.consumer.offset_store import OffsetStore
from client.consumer.process_queue import ProcessQueue
from client.message import MessageQueue
from client.results import ConsumeResult
from protocol.message_ext import MessageExt
from runtime.tasks import stop_tasks

_log = get_logger("rocketq.client.consume")

LOCAL_RETRY_DELAY = 5.0  # J: submitConsumeRequestLater, 5 s
LOCK_RENEW_INTERVAL = 20.0  # J: lockMQPeriodically
DLQ_DELAY_LEVEL = -1  # CONSUMER_SEND_MSG_BACK: straight to the dead-letter queue
TIMEOUT_DELAY_LEVEL = 3  # J cleanExpiredMsg: sendMessageBack(msg, 3)


class ConsumeHooks(Protocol):
    """What the consume services need from their consumer."""

    offset_store: OffsetStore

    def invoke_listener(self, msgs: list[MessageExt]) -> Awaitable[ConsumeResult]: ...

    async def send_back(self, mq: MessageQueue, msg: MessageExt, delay_level: int) -> bool: ...

    def on_consumed(self, mq: MessageQueue, pq: ProcessQueue) -> None: ...

    def process_queues(self) -> Iterable[tuple[MessageQueue, ProcessQueue]]: ...

    async def lock(self, mqs: list[MessageQueue]) -> set[MessageQueue]: ...


@dataclass(slots=True)
class ConsumeStats:
    ok: int = 0
    failed: int = 0
    sent_back: int = 0
    local_retries: int = 0
    expired: int = 0
    # per topic: [messages consumed OK, messages failed, listener milliseconds, listener calls] (running info)
    topics: dict[str, list[float]] = field(default_factory=dict)

    def record(self, topic: str, count: int, ok: bool, rt_ms: float) -> None:
        t = self.topics.get(topic)
        if t is None:
            t = self.topics[topic] = [0, 0, 0.0, 0]
        t[0 if ok else 1] += count
        t[2] += rt_ms
        t[3] += 1


@dataclass(slots=True)
class _Request:
    mq: MessageQueue
    pq: ProcessQueue
    msgs: list[MessageExt]


class ConcurrentConsumeService:
    def __init__(self, hooks: ConsumeHooks, config: PushConsumerConfig, *, broadcasting: bool) -> None:
        self._hooks = hooks
        self._config = config
        self._broadcasting = broadcasting
        # batches no worker has taken yet, and the idle workers' futures: a batch goes straight to an idle worker's
        # future (the last one to go idle: its frames are the warmest), else waits here (asyncio.Queue did the same
        # with twice the calls per batch, on the path from a pull's reply to the listener)
        self._queued: collections.deque[_Request] = collections.deque()
        self._idle_workers: list[asyncio.Future[_Request]] = []
        self._workers: list[asyncio.Task[None]] = []
        self._timers: set[asyncio.TimerHandle] = set()
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._closing = False
        self.stats = ConsumeStats()

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._workers = [
            loop.create_task(self._worker(), name=f"consume-{i}") for i in range(self._config.consume_thread_max)
        ]
        self._workers.append(
            loop.create_task(
                every(self._config.consume_timeout * 60, self.clean_expired, "consume timeout clean-up failed", _log),
                name="consume-timeout",
            )
        )

    def submit(self, mq: MessageQueue, pq: ProcessQueue, msgs: list[MessageExt]) -> None:
        n = self._config.consume_message_batch_max_size
        if len(msgs) <= n:  # the common case (workload B: one short batch per pull): no slice copied
            self._put(_Request(mq, pq, msgs))
            return
        for i in range(0, len(msgs), n):
            self._put(_Request(mq, pq, msgs[i : i + n]))

    def _put(self, req: _Request) -> None:
        idle = self._idle_workers
        while idle:
            fut = idle.pop()
            if not fut.done():  # done: its worker was cancelled (close)
                fut.set_result(req)
                return
        self._queued.append(req)

    def _submit_later(self, req: _Request, delay: float) -> None:
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._timers.discard(handle)
            if not self._closing and not req.pq.dropped:
                self._put(req)

        handle = loop.call_later(delay, fire)
        self._timers.add(handle)

    async def _worker(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if self._queued:
                req = self._queued.popleft()
            else:
                fut: asyncio.Future[_Request] = loop.create_future()
                self._idle_workers.append(fut)
                req = await fut
            if req.pq.dropped or self._closing:  # closing: dropped as the queued ones are (not committed)
                continue
            self._busy += 1
            self._idle.clear()
            try:
                await self._consume(req)
            except Exception as exc:  # a bug here must not kill the worker
                _log.error("consume request failed", mq=str(req.mq), error=repr(exc), exc_info=exc)
            finally:
                self._busy -= 1
                if self._busy == 0:
                    self._idle.set()

    async def _consume(self, req: _Request) -> None:
        mq, pq, batch = req.mq, req.pq, req.msgs
        begin = time.monotonic()
        pq.mark_started(batch, begin)
        result = await self._hooks.invoke_listener(batch)
        self.stats.record(mq.topic, len(batch), result is ConsumeResult.SUCCESS, (time.monotonic() - begin) * 1000)
        if pq.dropped:  # revoked meanwhile: the new owner starts from the committed offset
            return
        if result is ConsumeResult.SUCCESS:
            self.stats.ok += len(batch)
            done = batch
        else:
            self.stats.failed += len(batch)
            done, retry = await self._failed(mq, batch)
            if retry:
                self.stats.local_retries += len(retry)
                _log.info("send back failed; consuming again locally", mq=str(mq), count=len(retry))
                self._submit_later(_Request(mq, pq, retry), LOCAL_RETRY_DELAY)
        self._commit(mq, pq, done)

    async def _failed(self, mq: MessageQueue, batch: list[MessageExt]) -> tuple[list[MessageExt], list[MessageExt]]:
        if self._broadcasting:
            _log.warning("broadcasting consumption failed; messages dropped", mq=str(mq), count=len(batch))
            return batch, []
        done: list[MessageExt] = []
        retry: list[MessageExt] = []
        for m in batch:
            if await self._hooks.send_back(mq, m, 0):
                self.stats.sent_back += 1
                done.append(m)
            else:
                m.reconsume_times += 1
                retry.append(m)
        return done, retry

    def _commit(self, mq: MessageQueue, pq: ProcessQueue, done: list[MessageExt]) -> None:
        offset = pq.remove(done)
        if offset >= 0 and not pq.dropped:
            self._hooks.offset_store.update(mq, offset)
        self._hooks.on_consumed(mq, pq)

    async def clean_expired(self) -> None:
        """Send back (level 3) and forget messages stuck in the listener for longer than ``consume_timeout``."""
        if self._broadcasting:
            return
        now = time.monotonic()
        for mq, pq in list(self._hooks.process_queues()):
            for m in pq.expired(now, self._config.consume_timeout * 60):
                if await self._hooks.send_back(mq, m, TIMEOUT_DELAY_LEVEL):
                    self.stats.expired += 1
                    _log.warning("message consume timed out; sent back", mq=str(mq), offset=m.queue_offset)
                    self._commit(mq, pq, [m])

    async def close(self, drain_timeout: float) -> None:
        """Drop queued batches (their offsets were not committed, so they are re-delivered), give the calls in
        flight ``drain_timeout`` seconds to finish, then stop the workers."""
        self._closing = True
        for h in self._timers:
            h.cancel()
        self._timers.clear()
        self._queued.clear()
        if self._busy:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(drain_timeout):
                    await self._idle.wait()
        await stop_tasks(*self._workers, on_error=log_stop_failure)
        self._workers = []


class OrderlyConsumeService:
    def __init__(self, hooks: ConsumeHooks, config: PushConsumerConfig, *, clustering: bool) -> None:
        self._hooks = hooks
        self._config = config
        self._clustering = clustering
        self._sem = asyncio.Semaphore(config.consume_thread_max)
        self._drains: dict[MessageQueue, asyncio.Task[None]] = {}
        self._renew: asyncio.Task[None] | None = None
        self._closing = False
        self.stats = ConsumeStats()

    def start(self) -> None:
        if self._clustering:
            self._renew = asyncio.get_running_loop().create_task(
                every(LOCK_RENEW_INTERVAL, self.renew_locks, "lock renewal failed", _log), name="orderly-lock-renew"
            )

    def submit(self, mq: MessageQueue, pq: ProcessQueue, msgs: list[MessageExt]) -> None:
        running = self._drains.get(mq)
        if self._closing or pq.dropped or (running is not None and not running.done()):
            return
        if self._clustering and not pq.locked:
            return  # the lock renewal resumes it
        task = asyncio.get_running_loop().create_task(self._drain(mq, pq), name=f"orderly-{mq.topic}-{mq.queue_id}")
        self._drains[mq] = task
        task.add_done_callback(lambda _t: self._drains.pop(mq, None) if self._drains.get(mq) is _t else None)

    async def _drain(self, mq: MessageQueue, pq: ProcessQueue) -> None:
        pq.consuming = True
        try:
            while not self._closing and not pq.dropped and len(pq) and (pq.locked or not self._clustering):
                batch = pq.take_in_order(self._config.consume_message_batch_max_size)
                async with self._sem:
                    begin = time.monotonic()
                    pq.mark_started(batch, begin)
                    result = await self._hooks.invoke_listener(batch)
                ok = result is ConsumeResult.SUCCESS
                self.stats.record(mq.topic, len(batch), ok, (time.monotonic() - begin) * 1000)
                if result is ConsumeResult.SUCCESS:
                    # committed even if the queue was revoked meanwhile: the revoke waits for this call and
                    # persists after it, so the next owner starts after this batch (J holds the consume lock)
                    self.stats.ok += len(batch)
                    self._commit(mq, pq, batch, even_if_dropped=True)
                    continue
                if pq.dropped:
                    return
                self.stats.failed += len(batch)
                if await self._give_up_poison(mq, pq, batch):
                    continue
                for m in batch:
                    m.reconsume_times += 1
                await asyncio.sleep(self._config.suspend_current_queue_time_ms / 1000)
        finally:
            pq.consuming = False

    async def _give_up_poison(self, mq: MessageQueue, pq: ProcessQueue, batch: list[MessageExt]) -> bool:
        """Messages that reached max_reconsume_times go to the DLQ; True if the batch is settled that way."""
        limit = self._config.effective_max_reconsume_times
        over = [m for m in batch if m.reconsume_times >= limit]
        if not over:
            return False
        dead = [m for m in over if await self._hooks.send_back(mq, m, DLQ_DELAY_LEVEL)]
        if dead:
            _log.warning("orderly message to the DLQ after retries", mq=str(mq), count=len(dead))
            self.stats.sent_back += len(dead)
            self._commit(mq, pq, dead)
        return len(dead) == len(batch)

    def _commit(
        self, mq: MessageQueue, pq: ProcessQueue, done: list[MessageExt], *, even_if_dropped: bool = False
    ) -> None:
        offset = pq.remove(done)
        if offset >= 0 and (even_if_dropped or not pq.dropped):
            self._hooks.offset_store.update(mq, offset)
        self._hooks.on_consumed(mq, pq)

    async def renew_locks(self) -> None:
        """Lock every owned queue again; a queue whose lock was lost stops consuming, one regained resumes."""
        owned = list(self._hooks.process_queues())
        if not owned:
            return
        locked = await self._hooks.lock([mq for mq, _ in owned])
        now = time.monotonic()
        for mq, pq in owned:
            was = pq.locked
            pq.locked = mq in locked
            if pq.locked:
                pq.lock_time = now
                if len(pq):
                    self.submit(mq, pq, [])
            elif was:
                _log.warning("queue lock lost; consumption paused", mq=str(mq))

    async def wait_idle(self, mq: MessageQueue, timeout: float) -> None:
        """Wait for the queue's listener call in flight (before its lock is released to another consumer)."""
        task = self._drains.get(mq)
        if task is not None:
            await asyncio.wait([task], timeout=timeout)

    async def close(self, drain_timeout: float) -> None:
        self._closing = True
        await stop_tasks(self._renew, on_error=log_stop_failure)
        self._renew = None
        drains = list(self._drains.values())
        if drains and drain_timeout > 0:
            await asyncio.wait(drains, timeout=drain_timeout)
        await stop_tasks(*drains, on_error=log_stop_failure)
