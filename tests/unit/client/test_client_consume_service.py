"""The consume services against fake hooks (no sockets): commits by smallest offset, send-back on failure, local
re-consumption when send-back fails, consume-timeout clean-up, and orderly consumption."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import pytest

from client.config import PushConsumerConfig
from client.consumer import consume
from client.consumer.consume import ConcurrentConsumeService, OrderlyConsumeService
from client.consumer.offset_store import LocalFileOffsetStore
from client.consumer.process_queue import ProcessQueue
from client.message import MessageQueue
from client.results import ConsumeResult
from protocol.message_ext import MessageExt
from tests.eventually import eventually

MQ = MessageQueue("T", "broker-a", 0)


def msgs(*offsets: int) -> list[MessageExt]:
    return [MessageExt(topic="T", body=b"x", queue_offset=o, commit_log_offset=1000 + o) for o in offsets]


class Hooks:
    def __init__(self, results: dict[int, list[ConsumeResult]] | None = None, send_back_ok: bool = True) -> None:
        self.offset_store = LocalFileOffsetStore("/nonexistent", "c", "g")
        self.results = results or {}
        self.calls: list[list[int]] = []
        self.sent_back: list[tuple[int, int]] = []
        self.send_back_ok = send_back_ok
        self.pqs: dict[MessageQueue, ProcessQueue] = {}
        self.consumed = asyncio.Event()
        self.block: asyncio.Event | None = None
        self.locked: set[MessageQueue] = {MQ}

    async def invoke_listener(self, batch: list[MessageExt]) -> ConsumeResult:
        self.calls.append([m.queue_offset for m in batch])
        if self.block is not None:
            await self.block.wait()
        planned = self.results.get(batch[0].queue_offset)
        return planned.pop(0) if planned else ConsumeResult.SUCCESS

    async def send_back(self, mq: MessageQueue, msg: MessageExt, delay_level: int) -> bool:
        self.sent_back.append((msg.queue_offset, delay_level))
        return self.send_back_ok

    def on_consumed(self, mq: MessageQueue, pq: ProcessQueue) -> None:
        self.consumed.set()

    def process_queues(self) -> Iterable[tuple[MessageQueue, ProcessQueue]]:
        return list(self.pqs.items())

    async def lock(self, mqs: list[MessageQueue]) -> set[MessageQueue]:
        return set(mqs) & self.locked


async def run_concurrent(
    hooks: Hooks, batch: list[MessageExt], **cfg: object
) -> tuple[ConcurrentConsumeService, ProcessQueue]:
    svc = ConcurrentConsumeService(hooks, PushConsumerConfig(**cfg), broadcasting=False)  # type: ignore[arg-type]
    svc.start()
    pq = ProcessQueue()
    pq.put(batch)
    hooks.pqs[MQ] = pq
    svc.submit(MQ, pq, batch)
    return svc, pq


async def test_success_commits_past_the_batch() -> None:
    hooks = Hooks()
    svc, pq = await run_concurrent(hooks, msgs(0, 1, 2, 3), consume_message_batch_max_size=2)
    await eventually(lambda: len(pq) == 0)
    assert sorted(hooks.calls) == [[0, 1], [2, 3]]
    assert hooks.offset_store.read_memory(MQ) == 4
    assert svc.stats.ok == 4
    await svc.close(1.0)


async def test_a_pull_that_fits_one_call_is_one_call() -> None:
    hooks = Hooks()
    batch = msgs(0, 1, 2)
    svc, pq = await run_concurrent(hooks, batch, consume_message_batch_max_size=3)
    await eventually(lambda: len(pq) == 0)
    assert hooks.calls == [[0, 1, 2]]
    assert hooks.offset_store.read_memory(MQ) == 3
    await svc.close(1.0)


async def test_batches_beyond_the_idle_workers_wait_their_turn_in_order() -> None:
    hooks = Hooks()
    svc, pq = await run_concurrent(hooks, msgs(0, 1, 2, 3, 4), consume_message_batch_max_size=1, consume_thread_max=1)
    await eventually(lambda: len(pq) == 0)
    assert hooks.calls == [[0], [1], [2], [3], [4]]  # one worker: each batch after the one before, as submitted
    assert hooks.offset_store.read_memory(MQ) == 5
    more = msgs(5, 6)  # the worker is idle again: a new batch reaches it directly
    pq.put(more)
    svc.submit(MQ, pq, more)
    await eventually(lambda: len(pq) == 0)
    assert hooks.calls[-2:] == [[5], [6]]
    assert hooks.offset_store.read_memory(MQ) == 7
    await svc.close(1.0)


async def test_reconsume_later_sends_back_and_moves_on() -> None:
    hooks = Hooks({1: [ConsumeResult.RECONSUME_LATER]})
    svc, pq = await run_concurrent(hooks, msgs(0, 1, 2))
    await eventually(lambda: len(pq) == 0)
    assert hooks.sent_back == [(1, 0)]  # delay level 0: the broker picks 3 + reconsume times
    assert hooks.offset_store.read_memory(MQ) == 3
    await svc.close(1.0)


async def test_failed_send_back_is_consumed_again_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consume, "LOCAL_RETRY_DELAY", 0.05)
    hooks = Hooks({1: [ConsumeResult.RECONSUME_LATER]}, send_back_ok=False)
    svc, pq = await run_concurrent(hooks, msgs(0, 1, 2))
    await eventually(lambda: len(pq) == 0)
    assert hooks.calls.count([1]) == 2  # once failed, once again locally
    assert hooks.offset_store.read_memory(MQ) == 3
    assert svc.stats.local_retries == 1
    await svc.close(1.0)


async def test_offset_waits_for_the_slowest_message() -> None:
    hooks = Hooks()
    hooks.block = asyncio.Event()
    svc, pq = await run_concurrent(hooks, msgs(0, 1, 2), consume_thread_max=1)
    await eventually(lambda: hooks.calls == [[0]])
    assert hooks.offset_store.read_memory(MQ) is None  # nothing committed while 0 is in the listener
    hooks.block.set()
    await eventually(lambda: len(pq) == 0)
    assert hooks.offset_store.read_memory(MQ) == 3
    await svc.close(1.0)


async def test_consume_timeout_sends_back_and_releases_the_offset() -> None:
    hooks = Hooks()
    hooks.block = asyncio.Event()
    svc, pq = await run_concurrent(hooks, msgs(0, 1), consume_thread_max=1, consume_timeout=0.0001)
    await eventually(lambda: hooks.calls == [[0]])
    await asyncio.sleep(0.01)  # let the 6 ms timeout pass (a real duration under test, not synchronisation)
    await svc.clean_expired()
    assert (0, 3) in hooks.sent_back  # sent back at level 3
    assert 0 not in pq and hooks.offset_store.read_memory(MQ) == 1
    hooks.block.set()
    await eventually(lambda: len(pq) == 0)
    await svc.close(1.0)


async def test_close_drops_queued_batches() -> None:
    hooks = Hooks()
    hooks.block = asyncio.Event()
    svc, _pq = await run_concurrent(hooks, msgs(0, 1, 2), consume_thread_max=1)
    await eventually(lambda: hooks.calls == [[0]])
    hooks.block.set()
    await svc.close(1.0)  # drops [1] and [2] at once, lets [0] finish
    assert hooks.calls == [[0]]
    assert hooks.offset_store.read_memory(MQ) == 1  # 1 and 2 were never consumed: re-delivered later


async def test_orderly_keeps_order_and_retries_in_place() -> None:
    hooks = Hooks({2: [ConsumeResult.SUSPEND_CURRENT_QUEUE_A_MOMENT, ConsumeResult.RECONSUME_LATER]})
    cfg = PushConsumerConfig(orderly=True, suspend_current_queue_time_ms=1)
    svc = OrderlyConsumeService(hooks, cfg, clustering=True)  # type: ignore[arg-type]
    svc.start()
    pq = ProcessQueue()
    pq.locked = True
    batch = msgs(0, 1, 2, 3, 4)
    pq.put(batch)
    hooks.pqs[MQ] = pq
    svc.submit(MQ, pq, batch)
    await eventually(lambda: len(pq) == 0)
    assert hooks.calls == [[0], [1], [2], [2], [2], [3], [4]]
    assert hooks.sent_back == []
    assert hooks.offset_store.read_memory(MQ) == 5
    await svc.close(1.0)


async def test_orderly_poison_message_goes_to_the_dlq() -> None:
    hooks = Hooks({1: [ConsumeResult.RECONSUME_LATER] * 10})
    cfg = PushConsumerConfig(orderly=True, suspend_current_queue_time_ms=1, max_reconsume_times=2)
    svc = OrderlyConsumeService(hooks, cfg, clustering=True)  # type: ignore[arg-type]
    pq = ProcessQueue()
    pq.locked = True
    batch = msgs(0, 1, 2)
    pq.put(batch)
    svc.submit(MQ, pq, batch)
    await eventually(lambda: len(pq) == 0)
    assert hooks.calls == [[0], [1], [1], [1], [2]]
    assert hooks.sent_back == [(1, -1)]
    await svc.close(1.0)


async def test_orderly_waits_for_the_lock() -> None:
    hooks = Hooks()
    hooks.locked = set()
    svc = OrderlyConsumeService(hooks, PushConsumerConfig(orderly=True), clustering=True)  # type: ignore[arg-type]
    pq = ProcessQueue()
    batch = msgs(0, 1)
    pq.put(batch)
    hooks.pqs[MQ] = pq
    svc.submit(MQ, pq, batch)
    await asyncio.sleep(0)
    assert hooks.calls == []  # not locked: nothing consumed
    hooks.locked = {MQ}
    await svc.renew_locks()
    await eventually(lambda: len(pq) == 0)
    assert hooks.calls == [[0], [1]]
    await svc.close(1.0)
