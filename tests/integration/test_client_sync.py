"""client.sync: the same producer and consumers from plain threads (each runs its own loop in the background).
The servers run on the test's loop, so the synchronous code runs in a worker thread."""

from __future__ import annotations

import asyncio
import threading

from client import ConsumeResult, Message, MessageQueue, SendStatus
from client.sync import Producer, PullConsumer, PushConsumer
from protocol.message_ext import MessageExt
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


def direct_scenario(ns: str) -> list[tuple[str, int, int]]:
    """Plain sends and a batch from this thread: answered on the thread's own connection, also after that
    connection broke."""
    import socket

    sent: list[tuple[str, int, int]] = []
    with Producer("PG_direct", namesrv_addr=ns) as p:
        for i in range(3):  # the first fills the route cache through the loop, the others go direct
            r = p.send(Message("TopicDirect", f"m{i}".encode()))
            assert r.send_status is SendStatus.SEND_OK
            sent.append((r.msg_id, r.message_queue.queue_id, r.queue_offset))
        conns = list(p._direct._all)
        assert len(conns) == 1, "plain sends were not answered on the thread's own connection"
        conns[0].sock.shutdown(socket.SHUT_RDWR)  # the connection breaks under the next send
        r = p.send(Message("TopicDirect", b"after-break"))  # the async path takes over
        assert r.send_status is SendStatus.SEND_OK
        sent.append((r.msg_id, r.message_queue.queue_id, r.queue_offset))
        r = p.send(Message("TopicDirect", b"redialled"))
        sent.append((r.msg_id, r.message_queue.queue_id, r.queue_offset))
        assert len(p._direct._all) == 1 and conns[0] not in p._direct._all
        r = p.send_batch([Message("TopicDirect", b"b%d" % i) for i in range(3)])  # direct too, one request
        assert r.send_status is SendStatus.SEND_OK and len(p._direct._all) == 1
        for i, msg_id in enumerate(r.msg_id.split(",")):
            sent.append((msg_id, r.message_queue.queue_id, r.queue_offset + i))
    return sent


async def test_sync_plain_sends_go_direct_and_survive_a_broken_connection(cluster: Cluster) -> None:
    from client import PullConsumer as AsyncPullConsumer

    await cluster.create_topic("TopicDirect", 1)
    sent = await asyncio.to_thread(direct_scenario, cluster.ns_addr)
    assert [offset for _, _, offset in sent] == [0, 1, 2, 3, 4, 5, 6, 7]  # each stored once, in order
    async with AsyncPullConsumer("CG_direct", namesrv_addr=cluster.ns_addr) as pc:
        got = await pc.pull(MessageQueue("TopicDirect", "broker-a", 0), 0, 32)
    bodies = [m.body for m in got.msg_found_list]
    assert bodies == [b"m0", b"m1", b"m2", b"after-break", b"redialled", b"b0", b"b1", b"b2"]
    assert [m.msg_id for m in got.msg_found_list] == [msg_id for msg_id, _, _ in sent]
