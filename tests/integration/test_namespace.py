"""Namespaces in the SDK (``namespace=``): names are wrapped as the Java client wraps them (``ns%Topic``,
``%RETRY%ns%group``), the broker only sees (and admin output shows) the wrapped names, and listeners see topics
without the namespace."""

from __future__ import annotations

from client import ConsumeResult, Message, Producer, PullConsumer, PullStatus, PushConsumer, ReceivedMessage
from tests.eventually import eventually
from tests.integration.client_support import Cluster


async def test_namespace_wraps_names_end_to_end(cluster: Cluster) -> None:
    await cluster.create_topic("ns1%TopicN", 1)
    seen: list[tuple[str, bytes, int]] = []

    async def listener(msgs: list[ReceivedMessage]) -> ConsumeResult:
        for m in msgs:
            seen.append((m.topic, m.body, m.reconsume_times))
        # the first delivery fails: the retry goes through %RETRY%ns1%CG_ns and comes back
        return ConsumeResult.SUCCESS if any(m.reconsume_times for m in msgs) else ConsumeResult.RECONSUME_LATER

    consumer = PushConsumer("CG_ns", namesrv_addr=cluster.ns_addr, namespace="ns1", consume_from_where="FIRST_OFFSET")
    consumer.subscribe("TopicN", "*", listener)
    async with Producer("PG_ns", namesrv_addr=cluster.ns_addr, namespace="ns1") as p, consumer:
        assert p.group == "ns1%PG_ns" and consumer.group == "ns1%CG_ns"
        r = await p.send(Message("TopicN", b"hello"))
        assert r.message_queue.topic == "ns1%TopicN"
        await eventually(lambda: len(seen) >= 2, timeout=20, what="a delivery and its retry")
    assert seen[0] == ("TopicN", b"hello", 0) and seen[1][:2] == ("TopicN", b"hello")
    broker = cluster.broker
    assert broker.store.get_max_offset_in_queue("ns1%TopicN", 0) == 1
    assert broker.topics.get("%RETRY%ns1%CG_ns") is not None  # the wrapped retry topic (J wrapNamespaceAndRetry)
    assert broker.groups.find_or_create("ns1%CG_ns") is not None
    assert broker.offsets.query("ns1%CG_ns", "ns1%TopicN", 0) == 1
    # a client without the namespace sees the wrapped names as they are (admin output shows them so too)
    async with PullConsumer("CG_plain", namesrv_addr=cluster.ns_addr) as c:
        (mq,) = await c.fetch_subscribe_queues("ns1%TopicN")
        res = await c.pull(mq, 0, 8)
        assert res.status is PullStatus.FOUND and res.msg_found_list[0].topic == "ns1%TopicN"


async def test_pull_consumer_in_a_namespace(cluster: Cluster) -> None:
    await cluster.create_topic("ns2%TopicP", 1)
    async with Producer("PG_ns2", namesrv_addr=cluster.ns_addr, namespace="ns2") as p:
        await p.send(Message("TopicP", b"pulled"))
    async with PullConsumer("CG_ns2", namesrv_addr=cluster.ns_addr, namespace="ns2") as c:
        (mq,) = await c.fetch_subscribe_queues("TopicP")
        assert mq.topic == "ns2%TopicP"
        c.assign([mq])
        await c.seek(mq, 0)
        msgs = await eventually(lambda: c.poll(timeout=0.5), what="the namespaced message")
        assert [(m.topic, m.body) for m in msgs] == [("TopicP", b"pulled")]
        await c.commit()
    assert cluster.broker.offsets.query("ns2%CG_ns2", "ns2%TopicP", 0) == 1


async def test_admin_client_in_a_namespace_and_wrapped_names_in_its_output(cluster: Cluster) -> None:
    from client.admin.admin_client import AdminClient

    async with AdminClient(cluster.ns_addr, namespace="ns3") as admin:
        await admin.create_topic(cluster.broker.addr, "TopicA", 2, 2, 6, False)
        assert cluster.broker.topics.get("ns3%TopicA") is not None
        await eventually(lambda: _routed(admin, "TopicA"), what="the namespaced route")
        async with Producer("PG_ns3", namesrv_addr=cluster.ns_addr, namespace="ns3") as p:
            r = await p.send(Message("TopicA", b"x", keys="key-ns3"))
        stats = await admin.topic_stats(cluster.broker.addr, "TopicA")
        assert {mq.topic for mq in stats} == {"ns3%TopicA"}  # output: the wrapped names, as J shows them
        found = await eventually(lambda: admin.query_by_key("TopicA", "key-ns3"), what="the index")
        assert [m.msg_id for m in found] == [r.msg_id] and found[0].topic == "ns3%TopicA"
    # the broker's metrics count the wrapped topic, as Apache RocketMQ's do
    assert ("ns3%TopicA", "normal") in cluster.broker.stats.topic_in


async def _routed(admin: object, topic: str) -> bool:
    from client.admin.admin_client import AdminClient

    assert isinstance(admin, AdminClient)
    try:
        await admin.topic_route(topic)
    except Exception:
        return False
    return True
