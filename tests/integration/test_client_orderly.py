"""Orderly push consumption against a real broker: per-sharding-key order across a group of two (queues locked on
the broker), and a failing message retried in place without letting later ones of its queue pass."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import defaultdict

from client import ConsumeResult, Message, Producer, PushConsumer
from protocol.message_ext import MessageExt
from tests.integration.client_support import Cluster, until


async def send_keyed(ns: str, topic: str, keys: int, per_key: int) -> None:
    async with Producer("PG_orderly", namesrv_addr=ns) as p:
        for seq in range(per_key):
            for k in range(keys):
                await p.send(Message(topic, f"k{k}:{seq}".encode(), keys=[f"k{k}"]), sharding_key=f"k{k}")


def parse(m: MessageExt) -> tuple[str, int]:
    key, seq = m.body.decode().split(":")
    return key, int(seq)


async def test_each_key_in_send_order_across_a_group(cluster: Cluster) -> None:
    await cluster.create_topic("TopicOrderly", 4)
    seen: dict[str, list[int]] = defaultdict(list)
    rng = random.Random(7)

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        await asyncio.sleep(rng.random() / 500)  # jitter, so queues interleave
        for m in msgs:
            k, seq = parse(m)
            seen[k].append(seq)
        return ConsumeResult.SUCCESS

    consumers = []
    for _ in range(2):
        c = PushConsumer("CG_orderly", namesrv_addr=cluster.ns_addr, orderly=True, consume_message_batch_max_size=3)
        c.subscribe("TopicOrderly", "*", listener)
        consumers.append(c)
    async with contextlib.AsyncExitStack() as stack:
        for c in consumers:
            await stack.enter_async_context(c)

        def shared() -> bool:
            owned = [{q for q in c.assignment if q.topic == "TopicOrderly"} for c in consumers]
            return len(owned[0]) == len(owned[1]) == 2 and not owned[0] & owned[1]

        await until(shared, what="the two orderly consumers to split 4 locked queues")
        for c in consumers:
            assert all(c.process_queue(q).locked for q in c.assignment)  # type: ignore[union-attr]
        await send_keyed(cluster.ns_addr, "TopicOrderly", keys=20, per_key=30)
        await until(lambda: sum(len(v) for v in seen.values()) >= 600, timeout=60, what="600 messages")
    assert sorted(seen) == sorted(f"k{k}" for k in range(20))
    for k, seqs in seen.items():
        assert seqs == list(range(30)), f"{k} out of order: {seqs}"


async def test_a_failing_message_blocks_only_its_queue_and_is_retried_in_place(cluster: Cluster) -> None:
    await cluster.create_topic("TopicOrderlyRetry", 2)
    calls: list[tuple[str, int]] = []
    failures = {("k0", 3): 2}  # k0:3 fails twice, then succeeds

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        k, seq = parse(msgs[0])
        calls.append((k, seq))
        if failures.get((k, seq), 0) > 0:
            failures[(k, seq)] -= 1
            return ConsumeResult.SUSPEND_CURRENT_QUEUE_A_MOMENT
        return ConsumeResult.SUCCESS

    c = PushConsumer("CG_orderly_retry", namesrv_addr=cluster.ns_addr, orderly=True, suspend_current_queue_time_ms=100)
    c.subscribe("TopicOrderlyRetry", "*", listener)
    async with c:
        await send_keyed(cluster.ns_addr, "TopicOrderlyRetry", keys=1, per_key=6)
        await until(lambda: ("k0", 5) in calls, timeout=20, what="k0:5")
    assert [seq for _k, seq in calls] == [0, 1, 2, 3, 3, 3, 4, 5]
    assert c.stats["sent_back"] == 0
