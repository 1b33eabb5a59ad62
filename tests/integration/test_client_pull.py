"""PullConsumer against a real broker: assign / poll / commit / seek, group subscription, the low-level pull and
its statuses, long polling, pause and resume."""

from __future__ import annotations

import asyncio

import pytest

from client import Message, MessageQueue, MQClientError, Producer, PullConsumer, PullStatus
from tests.eventually import eventually
from tests.integration.client_support import Cluster, until


async def produce(ns: str, topic: str, n: int, queue: MessageQueue | None = None) -> None:
    async with Producer("PG_pull_tests", namesrv_addr=ns) as p:
        for i in range(n):
            await p.send(Message(topic, b"%d" % i, keys=[str(i)]), queue=queue)


async def poll_n(c: PullConsumer, n: int, timeout: float = 10) -> list[bytes]:
    """Poll until ``n`` bodies are in (fails after ``timeout``); the bodies."""
    out: list[bytes] = []

    async def enough() -> bool:
        out.extend(m.body for m in await c.poll(timeout=1.0))
        return len(out) >= n

    await eventually(enough, timeout=timeout, what=lambda: f"{n} messages, got {len(out)}", step=0)
    return out


async def test_assign_poll_commit_and_seek(cluster: Cluster) -> None:
    await cluster.create_topic("TopicPull", 2)
    q0, q1 = MessageQueue("TopicPull", "broker-a", 0), MessageQueue("TopicPull", "broker-a", 1)
    await produce(cluster.ns_addr, "TopicPull", 10, q0)
    await produce(cluster.ns_addr, "TopicPull", 5, q1)
    async with PullConsumer("CG_pull", namesrv_addr=cluster.ns_addr, consume_from_where="FIRST_OFFSET") as c:
        assert await c.fetch_subscribe_queues("TopicPull") == [q0, q1]
        c.assign([q0, q1])
        got = await poll_n(c, 15)
        assert sorted(got, key=int) == sorted([b"%d" % i for i in range(10)] + [b"%d" % i for i in range(5)], key=int)
        assert await c.poll(timeout=0.2) == []  # nothing more
        assert c.consumed_positions() == {q0: 10, q1: 5}
        assert await c.committed(q0) in (None, 0)
        await c.commit()
        assert (await c.committed(q0), await c.committed(q1)) == (10, 5)
        # back to offset 4 of queue 0: the same messages again, in order
        await c.seek(q0, 4)
        again = await poll_n(c, 6)
        assert again == [b"%d" % i for i in range(4, 10)]
        with pytest.raises(MQClientError):
            await c.seek(q0, 11)  # beyond the end
        await c.commit({q0: 7})
        assert await c.committed(q0) == 7
        assert await c.position(q0) == 10
    # a new consumer of the group starts at the committed offsets
    async with PullConsumer("CG_pull", namesrv_addr=cluster.ns_addr) as c2:
        c2.assign([q0])
        assert await c2.position(q0) == 7
        assert await poll_n(c2, 3) == [b"7", b"8", b"9"]


async def test_new_messages_arrive_while_polling(cluster: Cluster) -> None:
    await cluster.create_topic("TopicLive", 1)
    q0 = MessageQueue("TopicLive", "broker-a", 0)
    async with PullConsumer("CG_live", namesrv_addr=cluster.ns_addr) as c:
        c.assign([q0])
        assert await c.position(q0) == 0
        assert await c.poll(timeout=0.1) == []
        sender = asyncio.create_task(produce(cluster.ns_addr, "TopicLive", 3))
        got = await poll_n(c, 3)  # the fetcher's long poll is answered as the messages arrive
        await sender
        assert got == [b"0", b"1", b"2"]
        # async iteration
        await produce(cluster.ns_addr, "TopicLive", 2)
        it = aiter(c)
        assert [(await anext(it)).body for _ in range(2)] == [b"0", b"1"]


async def test_pause_and_resume(cluster: Cluster) -> None:
    await cluster.create_topic("TopicPause", 2)
    q0, q1 = MessageQueue("TopicPause", "broker-a", 0), MessageQueue("TopicPause", "broker-a", 1)
    await produce(cluster.ns_addr, "TopicPause", 3, q0)
    await produce(cluster.ns_addr, "TopicPause", 3, q1)
    async with PullConsumer("CG_pause", namesrv_addr=cluster.ns_addr, consume_from_where="FIRST_OFFSET") as c:
        c.assign([q0, q1])
        c.pause([q0])
        first = await poll_n(c, 3)
        assert len(first) == 3 and c.consumed_positions().get(q0, 0) == 0
        c.resume([q0])
        assert len(await poll_n(c, 3)) == 3
        assert c.consumed_positions() == {q0: 3, q1: 3}


async def test_group_subscription_shares_the_queues(cluster: Cluster) -> None:
    await cluster.create_topic("TopicSub", 4)
    a = PullConsumer("CG_sub", namesrv_addr=cluster.ns_addr, consume_from_where="FIRST_OFFSET", auto_commit=True)
    b = PullConsumer("CG_sub", namesrv_addr=cluster.ns_addr, consume_from_where="FIRST_OFFSET", auto_commit=True)
    a.subscribe("TopicSub")
    b.subscribe("TopicSub")
    with pytest.raises(MQClientError):
        a.assign([MessageQueue("TopicSub", "broker-a", 0)])
    async with a, b:
        await until(lambda: len(a.assignment) == 2 and len(b.assignment) == 2, what="2 queues each")
        assert not set(a.assignment) & set(b.assignment)
        await produce(cluster.ns_addr, "TopicSub", 40)
        got = await asyncio.gather(poll_n(a, 20), poll_n(b, 20))
        assert sorted(got[0] + got[1], key=int) == [b"%d" % i for i in range(40)]
    # auto-commit stored the positions at close
    assert sum(cluster.broker.offsets.query("CG_sub", "TopicSub", q) for q in range(4)) == 40


async def test_low_level_pull_statuses_and_long_polling(cluster: Cluster) -> None:
    await cluster.create_topic("TopicLow", 1)
    q0 = MessageQueue("TopicLow", "broker-a", 0)
    await produce(cluster.ns_addr, "TopicLow", 3)
    async with PullConsumer("CG_low", namesrv_addr=cluster.ns_addr) as c:
        res = await c.pull(q0, 0, 2)
        assert res.status is PullStatus.FOUND and [m.body for m in res.msg_found_list] == [b"0", b"1"]
        assert (res.next_begin_offset, res.min_offset, res.max_offset) == (2, 0, 3)
        assert (await c.pull(q0, 3, 32)).status is PullStatus.NO_NEW_MSG
        moved = await c.pull(q0, 100, 32)
        # J: an offset past the end is corrected to the min offset while that is 0, else to the max
        assert moved.status is PullStatus.OFFSET_ILLEGAL and moved.next_begin_offset == 0
        assert (await c.pull(q0, 0, 32, "NoSuchTag")).msg_found_list == []
        # long polling: the broker holds the pull until a message arrives
        held = asyncio.create_task(c.pull(q0, 3, 32, block_ms=10_000))
        await asyncio.sleep(0)
        await produce(cluster.ns_addr, "TopicLow", 1)
        res = await asyncio.wait_for(held, 10)
        assert res.status is PullStatus.FOUND and [m.body for m in res.msg_found_list] == [b"0"]
        assert [await c.max_offset(q0), await c.min_offset(q0)] == [4, 0]
