"""Producer against a real name server and broker: what is sent is what a consumer reads back (body, tags, keys,
properties, UNIQ_KEY, compression), batches, oneway, ordered sends, retries on another broker, name-server
failover, delay levels, auto-create of an unknown topic (and a clear error without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from client import BrokerError, Message, MessageQueue, MQClientError, Producer, PullConsumer, PullStatus, SendStatus
from protocol.bodies import TopicConfig
from protocol.message_ext import MessageExt
from protocol.record import SYSFLAG_COMPRESSED
from tests.harness import run_broker, run_namesrv
from tests.integration.client_support import Cluster, until


async def read_all(ns_addr: str, topic: str, expected: int) -> list[MessageExt]:
    """Every message of ``topic`` from offset 0 of each queue, via low-level pulls."""
    async with PullConsumer("reader", namesrv_addr=ns_addr) as c:
        out: list[MessageExt] = []

        async def done() -> bool:
            out.clear()
            for mq in await c.fetch_subscribe_queues(topic):
                offset = 0
                while True:
                    res = await c.pull(mq, offset, 32)
                    out.extend(res.msg_found_list)
                    if res.status is not PullStatus.FOUND:
                        break
                    offset = res.next_begin_offset
            return len(out) >= expected

        await until(done, what=f"{expected} messages in {topic}")
        return out


async def test_send_and_read_back_every_field(cluster: Cluster) -> None:
    await cluster.create_topic("TopicFields", 4)
    async with Producer("PG_fields", namesrv_addr=cluster.ns_addr) as p:
        r = await p.send(
            Message("TopicFields", b"hello", tags="TagA", keys=["k1", "k2"], properties={"color": "red"}, flag=7)
        )
        assert r.send_status is SendStatus.SEND_OK
        assert r.message_queue.topic == "TopicFields" and r.queue_offset == 0
        assert len(r.msg_id) == 32 and len(r.offset_msg_id) == 32
        # the broker knows the producer group from the heartbeat sent on first use of the topic
        assert "PG_fields" in cluster.broker.clients.producer_groups()
    [m] = await read_all(cluster.ns_addr, "TopicFields", 1)
    assert (m.topic, m.body, m.tags, m.keys, m.flag) == ("TopicFields", b"hello", "TagA", ["k1", "k2"], 7)
    assert m.properties["color"] == "red"
    assert m.msg_id == r.msg_id and m.offset_msg_id == r.offset_msg_id
    assert (m.queue_id, m.queue_offset) == (r.message_queue.queue_id, r.queue_offset)


async def test_compressed_body_round_trip(cluster: Cluster) -> None:
    big = b"0123456789abcdef" * 1024  # 16 KiB > 4 KiB threshold
    async with Producer("PG_zip", namesrv_addr=cluster.ns_addr) as p:
        await p.send(Message("TopicZip", big, tags="Z"))
    [m] = await read_all(cluster.ns_addr, "TopicZip", 1)
    # stored compressed (the broker keeps the flag and the bytes), inflated by the consumer
    assert m.body == big and m.sys_flag & SYSFLAG_COMPRESSED


async def test_batch_and_oneway(cluster: Cluster) -> None:
    await cluster.create_topic("TopicBatch", 2)
    async with Producer("PG_batch", namesrv_addr=cluster.ns_addr) as p:
        r = await p.send_batch([Message("TopicBatch", b"b%d" % i, keys=[f"k{i}"]) for i in range(32)])
        assert len(r.msg_id.split(",")) == 32 and len(r.offset_msg_id.split(",")) == 32
        await p.send_oneway(Message("TopicBatch", b"oneway", tags="O"))
        with pytest.raises(MQClientError):
            await p.send_batch([Message("TopicBatch", b"x"), Message("Other", b"y")])
    msgs = await read_all(cluster.ns_addr, "TopicBatch", 33)
    batch = sorted((m for m in msgs if m.body != b"oneway"), key=lambda m: m.queue_offset)
    assert [m.body for m in batch] == [b"b%d" % i for i in range(32)]  # one queue, in order
    assert {m.queue_id for m in batch} == {r.message_queue.queue_id}
    assert [m.msg_id for m in batch] == r.msg_id.split(",")


async def test_sharding_key_selector_and_fixed_queue(cluster: Cluster) -> None:
    await cluster.create_topic("TopicOrder", 4)
    async with Producer("PG_order", namesrv_addr=cluster.ns_addr) as p:
        by_key = {
            k: {(await p.send(Message("TopicOrder", b"x"), sharding_key=k)).message_queue for _ in range(5)}
            for k in ("a", "b", 17)
        }
        assert all(len(qs) == 1 for qs in by_key.values())
        target = MessageQueue("TopicOrder", "broker-a", 2)
        assert (await p.send(Message("TopicOrder", b"x"), queue=target)).message_queue == target
        r = await p.send(Message("TopicOrder", b"x"), selector=lambda qs, _m, arg: qs[arg % len(qs)], arg=5)
        assert r.message_queue.queue_id == 1


async def test_delay_level(cluster: Cluster) -> None:
    await cluster.create_topic("TopicDelay", 1)
    async with Producer("PG_delay", namesrv_addr=cluster.ns_addr) as p:
        r = await p.send(Message("TopicDelay", b"later", delay_level=2))
    assert r.send_status is SendStatus.SEND_OK
    [m] = await read_all(cluster.ns_addr, "TopicDelay", 1)  # after the 1 s delay, in the real topic
    assert m.body == b"later" and m.topic == "TopicDelay"


async def test_name_server_failover(cluster: Cluster) -> None:
    await cluster.create_topic("TopicFailover", 1)
    # the first name server refuses connections: lookups fall over to the second
    async with Producer("PG_ns", namesrv_addr=f"127.0.0.1:1;{cluster.ns_addr}") as p:
        r = await p.send(Message("TopicFailover", b"x"))
        assert r.send_status is SendStatus.SEND_OK
        assert p.instance.namesrv_addrs[p.instance._ns_index] == cluster.ns_addr


async def test_retries_on_another_broker(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path / "ns") as ns, run_broker(ns, tmp_path / "b", brokerName="broker-b") as b:
        b.topics.put(TopicConfig.with_queues("TopicHA", 2))
        async with Producer("PG_ha", namesrv_addr=ns.addr, send_latency_fault_enable=True) as p:
            async with run_broker(ns, tmp_path / "a", brokerName="broker-a") as a:
                a.topics.put(TopicConfig.with_queues("TopicHA", 2))

                async def both_routed() -> bool:
                    route = await p.instance.get_route("TopicHA", refresh=True)
                    return route is not None and len(route.publish_queues()) == 4

                await until(both_routed, what="TopicHA on two brokers")
                addr_a = a.addr
            # broker-a is gone but the cached route still names it: sends fail there and go to broker-b
            assert p.instance.broker_addr("broker-a") == addr_a
            results = [await p.send(Message("TopicHA", b"x%d" % i)) for i in range(8)]
            assert {r.message_queue.broker_name for r in results} == {"broker-b"}


async def test_producer_auto_creates_an_unknown_topic(cluster: Cluster) -> None:
    topic = "TopicAutoCreated"
    assert topic not in cluster.broker.topics
    assert cluster.ns.route_table.route(topic) is None
    async with Producer("PG_auto", namesrv_addr=cluster.ns_addr) as producer:
        r = await producer.send(Message(topic, b"first"))
        assert r.send_status is SendStatus.SEND_OK and r.message_queue.topic == topic
    tc = cluster.broker.topics.get(topic)
    assert tc is not None and tc.write_queue_nums == 4, "the producer's default_topic_queue_nums"
    await until(lambda: cluster.ns.route_table.route(topic) is not None, what="the new topic on the name server")
    async with PullConsumer("CG_auto", namesrv_addr=cluster.ns_addr) as c:
        res = await c.pull(r.message_queue, 0, 8)
        assert [m.body for m in res.msg_found_list] == [b"first"]


async def test_unknown_topic_without_auto_create(tmp_path: Path) -> None:
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, autoCreateTopicEnable=False),
        Producer("PG_none", namesrv_addr=ns.addr, send_timeout_ms=2000) as p,
    ):
        with pytest.raises((MQClientError, BrokerError)):
            await p.send(Message("NoSuchTopic", b"x"))


async def test_message_checks_before_sending(cluster: Cluster) -> None:
    async with Producer("PG_checks", namesrv_addr=cluster.ns_addr) as p:
        with pytest.raises(MQClientError):
            await p.send(Message("TopicChecks", b"x" * (4 * 1024 * 1024 + 1)))
        with pytest.raises(MQClientError):
            await p.send(Message("bad topic", b"x"))


async def test_sends_follow_a_refreshed_route_at_once(cluster: Cluster) -> None:
    """The producer keeps a topic's queue list while its route is unchanged; a refreshed route (here: 4 queues cut
    to 2) must apply to the very next sends."""
    await cluster.create_topic("TopicShrink", 4)
    async with Producer("PG_shrink", namesrv_addr=cluster.ns_addr) as p:
        first = {(await p.send(Message("TopicShrink", b"x"))).message_queue.queue_id for _ in range(8)}
        assert first == {0, 1, 2, 3}
        cluster.broker.topics.put(TopicConfig.with_queues("TopicShrink", 2))

        async def shrunk() -> bool:
            route = await p.instance.get_route("TopicShrink", refresh=True)
            return route is not None and len(route.publish_queues()) == 2

        await until(shrunk, what="the name server to route 2 queues")
        assert [q.queue_id for q in await p.publish_queues("TopicShrink")] == [0, 1]
        after = {(await p.send(Message("TopicShrink", b"y"))).message_queue.queue_id for _ in range(8)}
        assert after == {0, 1}
