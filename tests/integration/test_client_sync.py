"""client.sync: the same producer and consumers from plain threads (each runs its own loop in the background).
The servers run on the test's loop, so the synchronous code runs in a worker thread."""

from __future__ import annotations

import asyncio
import threading

from client import ConsumeResult, Message, MessageQueue, SendStatus
from client.sync import Producer, PullConsumer, PushConsumer
from protocol.message import MessageExt
from tests.integration.client_support import Cluster


def scenario(ns: str) -> None:
    with Producer("PG_sync", namesrv_addr=ns) as p:
        assert p.send(Message("TopicSync", b"one", tags="A")).send_status is SendStatus.SEND_OK
        assert p.send_batch([Message("TopicSync", b"two"), Message("TopicSync", b"three")]).msg_id.count(",") == 1
        p.send_orderly(Message("TopicSync", b"four"), sharding_key="k")

    got: list[bytes] = []
    done = threading.Event()

    def listener(msgs: list[MessageExt]) -> ConsumeResult:
        got.extend(m.body for m in msgs)
        if len(got) >= 4:
            done.set()
        return ConsumeResult.SUCCESS

    consumer = PushConsumer("CG_sync", namesrv_addr=ns, consume_from_where="FIRST_OFFSET")
    consumer.subscribe("TopicSync", "*", listener)
    with consumer:
        assert done.wait(20), got
    assert sorted(got) == [b"four", b"one", b"three", b"two"]

    q0 = MessageQueue("TopicSync", "broker-a", 0)
    with PullConsumer("CG_sync_pull", namesrv_addr=ns, consume_from_where="FIRST_OFFSET") as pc:
        assert q0 in pc.fetch_subscribe_queues("TopicSync")
        pc.assign([q0])
        first = pc.pull(q0, 0, 32)
        polled: list[bytes] = []
        while len(polled) < len(first.msg_found_list):
            polled.extend(m.body for m in pc.poll(timeout=2))
        assert polled == [m.body for m in first.msg_found_list]
        pc.commit()
        assert pc.committed(q0) == first.next_begin_offset


async def test_sync_facade(cluster: Cluster) -> None:
    await cluster.create_topic("TopicSync", 2)
    await asyncio.to_thread(scenario, cluster.ns_addr)
