"""The RocketMQ 5 gRPC endpoint in-process (``run_broker(..., enableProxy=True, grpcServerPort=0)``) with raw v2
calls over loopback: the port-0 bind, the advertised route, Settings, a delivery time through the timer, admin views of
5.x clients, consumer progress of a POP group, and namespaces (``x-mq-namespace``)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from broker.app import BrokerApp
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pb import service_pb2 as spb
from broker.proxy.pb import service_pb2_grpc
from client.admin.admin_client import AdminClient
from protocol.codes import ResponseCode
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker
from tests.integration.broker_wire import messages, pull

MD = (("x-mq-client-id", "it@1@0@x"), ("x-mq-language", "PYTHON"), ("x-mq-client-version", "5.1.2"))
NS_MD = (*MD, ("x-mq-namespace", "ns5"))


@pytest.fixture()
async def broker(tmp_path: Path) -> AsyncIterator[BrokerApp]:
    async with run_broker(None, tmp_path, enableProxy=True, grpcServerPort=0, messageDelayLevel="1s") as b:
        b.topics.create_if_absent("GT", 2, 6)
        yield b


def _settings(kind: int, group: str = "", topic: str = "GT") -> spb.TelemetryCommand:
    s = pb.Settings(client_type=kind)  # type: ignore[arg-type]
    if kind == pb.ClientType.PRODUCER:
        s.publishing.topics.add().name = topic
    else:
        s.subscription.group.name = group
        sub = s.subscription.subscriptions.add()
        sub.topic.name = topic
        sub.expression.type, sub.expression.expression = pb.FilterType.TAG, "*"
    return spb.TelemetryCommand(settings=s)


async def _telemetry(stub: Any, cmd: spb.TelemetryCommand) -> spb.TelemetryCommand:
    call = stub.Telemetry(metadata=MD)
    await call.write(cmd)
    reply = await call.read()
    await call.done_writing()
    return reply  # type: ignore[no-any-return]


async def test_port_zero_route_advertises_broker_ip_and_grpc_port(broker: BrokerApp, stub: Any) -> None:
    req = spb.QueryRouteRequest()
    req.topic.name = "GT"
    resp = await stub.QueryRoute(req, metadata=MD)
    assert resp.status.code == pb.Code.OK
    assert [q.id for q in resp.message_queues] == [0, 1]
    assert broker.proxy is not None
    for q in resp.message_queues:
        assert q.permission == pb.Permission.READ_WRITE and q.broker.id == 0
        assert [(a.host, a.port) for a in q.broker.endpoints.addresses] == [("127.0.0.1", broker.proxy.port)]
        assert q.broker.endpoints.scheme == pb.AddressScheme.IPv4


async def test_settings_replies_carry_what_clients_require(stub: Any) -> None:
    prod = await _telemetry(stub, _settings(pb.ClientType.PRODUCER))
    assert prod.status.code == pb.Code.OK
    assert prod.settings.publishing.max_body_size == 4 * 1024 * 1024
    assert prod.settings.backoff_policy.max_attempts == 3
    push = await _telemetry(stub, _settings(pb.ClientType.PUSH_CONSUMER, "GID_it"))
    s = push.settings
    assert s.subscription.long_polling_timeout.seconds == 20 and s.subscription.receive_batch_size == 32
    assert s.backoff_policy.max_attempts == 17 and len(s.backoff_policy.customized_backoff.next) == 1
    assert s.subscription.fifo is False


async def test_admin_sees_5x_clients(broker: BrokerApp, stub: Any) -> None:
    await _telemetry(stub, _settings(pb.ClientType.SIMPLE_CONSUMER, "GID_admin"))
    hb = spb.HeartbeatRequest(client_type=pb.ClientType.SIMPLE_CONSUMER)
    hb.group.name = "GID_admin"
    assert (await stub.Heartbeat(hb, metadata=MD)).status.code == pb.Code.OK
    assert broker.clients.client_ids("GID_admin") == ["it@1@0@x"]
    grp = broker.clients.consumer_group("GID_admin")
    assert grp is not None and set(grp.subscriptions) == {"GT"}
    term = spb.NotifyClientTerminationRequest()
    term.group.name = "GID_admin"
    assert (await stub.NotifyClientTermination(term, metadata=MD)).status.code == pb.Code.OK
    assert broker.clients.client_ids("GID_admin") == []
    # a producer is listed under its topics (RocketMQ 5: producer group = topic)
    await _telemetry(stub, _settings(pb.ClientType.PRODUCER))
    hb = spb.HeartbeatRequest(client_type=pb.ClientType.PRODUCER)
    assert (await stub.Heartbeat(hb, metadata=MD)).status.code == pb.Code.OK
    async with AdminClient("127.0.0.1:1") as admin:
        conns = await admin.producer_connections(broker.addr, "GT")
    assert [(c.client_id, c.language) for c in conns.connection_set] == [("it@1@0@x", "PYTHON")]


async def test_delivery_time_goes_through_the_timer_not_a_level(broker: BrokerApp, stub: Any) -> None:
    """Only one level (1 s): a 2.5 s delivery time is held by the timer (not rounded to a delay level) and arrives
    after its time."""
    await _telemetry(stub, _settings(pb.ClientType.SIMPLE_CONSUMER, "GID_delay"))
    m = pb.Message(body=b"later")
    m.topic.name = "GT"
    m.system_properties.message_id = "01DELAY"
    m.system_properties.message_type = pb.MessageType.DELAY
    at_ms = int(time.time() * 1000) + 2500
    m.system_properties.delivery_timestamp.FromMilliseconds(at_ms)
    resp = await stub.SendMessage(spb.SendMessageRequest(messages=[m]), metadata=MD)
    assert resp.status.code == pb.Code.OK
    req = spb.ReceiveMessageRequest(batch_size=4)
    req.group.name = "GID_delay"
    req.message_queue.topic.name = "GT"
    req.message_queue.id = -1
    req.filter_expression.type, req.filter_expression.expression = pb.FilterType.TAG, "*"
    req.invisible_duration.FromSeconds(30)
    req.long_polling_timeout.FromSeconds(10)
    got = [r async for r in stub.ReceiveMessage(req, metadata=MD, timeout=15)]
    msgs = [r.message for r in got if r.HasField("message")]
    assert [x.body for x in msgs] == [b"later"]
    assert msgs[0].system_properties.message_type == pb.MessageType.DELAY
    assert msgs[0].system_properties.store_timestamp.ToMilliseconds() >= at_ms
    assert msgs[0].system_properties.delivery_timestamp.ToMilliseconds() == at_ms
    timer = broker.schedule.timer if broker.schedule is not None else None
    assert timer is not None and timer.dequeue_total == {"GT": 1}
    # consumer progress: the in-flight message is not consumed yet; acked, it is
    qid = msgs[0].system_properties.queue_id
    assert broker.offsets.query("GID_delay", "GT", qid) == msgs[0].system_properties.queue_offset
    assert await _in_flight(broker, "GID_delay") == 1  # mqadmin consumerProgress: pullOffset − consumerOffset
    ack = spb.AckMessageRequest()
    ack.group.name, ack.topic.name = "GID_delay", "GT"
    ack.entries.add(message_id="01DELAY", receipt_handle=msgs[0].system_properties.receipt_handle)
    assert (await stub.AckMessage(ack, metadata=MD)).status.code == pb.Code.OK
    assert broker.offsets.query("GID_delay", "GT", qid) == msgs[0].system_properties.queue_offset + 1
    assert await _in_flight(broker, "GID_delay") == 0


async def _in_flight(broker: BrokerApp, group: str) -> int:
    async with AdminClient("127.0.0.1:1") as admin:
        stats = await admin.consume_stats(broker.addr, group, "GT")
    return sum(w.pull_offset - w.consumer_offset for w in stats.offset_table.values())


async def test_with_accounts_only_signed_requests_pass(broker: BrokerApp, stub: Any) -> None:
    from broker.proxy import auth
    from broker.proxy.acl import GrpcAcl
    from runtime.acl.rules import Account, AclRules

    assert broker.proxy is not None
    rules = AclRules({"AK1_key": Account.build("AK1_key", "sk1_secret", default_topic_perm="PUB")})
    broker.proxy.service.set_acl(GrpcAcl(lambda: rules))
    req = spb.QueryRouteRequest()
    req.topic.name = "GT"
    assert (await stub.QueryRoute(req, metadata=MD)).status.code == pb.Code.UNAUTHORIZED
    date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    signed = (
        *MD,
        ("x-mq-date-time", date),
        (
            "authorization",
            f"MQv2-HMAC-SHA1 Credential=AK1_key, SignedHeaders=x-mq-date-time, Signature={auth.sign('sk1_secret', date)}",
        ),
    )
    assert (await stub.QueryRoute(req, metadata=signed)).status.code == pb.Code.OK
    broker.proxy.service.set_acl(None)
    assert (await stub.QueryRoute(req, metadata=MD)).status.code == pb.Code.OK


def _recv(group: str, *, auto_renew: bool, poll_s: int) -> spb.ReceiveMessageRequest:
    req = spb.ReceiveMessageRequest(batch_size=8, auto_renew=auto_renew)
    req.group.name = group
    req.message_queue.topic.name = "GT"
    req.message_queue.id = -1
    req.filter_expression.type, req.filter_expression.expression = pb.FilterType.TAG, "*"
    if not auto_renew:
        req.invisible_duration.FromSeconds(10)
    req.long_polling_timeout.FromSeconds(poll_s)
    return req


async def test_auto_renew_holds_messages_while_the_client_is_connected(tmp_path: Path) -> None:
    """defaultInvisibleTimeMills 2 s: an auto-renewed receive stays invisible past it (and its handle acks) while
    the push consumer is connected; after it terminates, its un-acked message comes back with attempt 2."""
    async with run_broker(None, tmp_path, enableProxy=True, grpcServerPort=0, defaultInvisibleTimeMills=2000) as b:
        b.topics.create_if_absent("GT", 1, 6)
        assert b.proxy is not None
        async with grpc.aio.insecure_channel(f"127.0.0.1:{b.proxy.port}") as ch:
            stub = service_pb2_grpc.MessagingServiceStub(ch)
            await _telemetry(stub, _settings(pb.ClientType.PUSH_CONSUMER, "GID_renew"))
            for i in range(2):
                m = pb.Message(body=f"m{i}".encode())
                m.topic.name = "GT"
                m.system_properties.message_id = f"01RENEW{i}"
                assert (await stub.SendMessage(spb.SendMessageRequest(messages=[m]), metadata=MD)).status.code == 20000
            got = [r async for r in stub.ReceiveMessage(_recv("GID_renew", auto_renew=True, poll_s=5), metadata=MD)]
            held = [r.message for r in got if r.HasField("message")]
            assert [m.body for m in held] == [b"m0", b"m1"]
            # longer than the 2 s invisible time: nothing comes back while the client is connected
            again = [r async for r in stub.ReceiveMessage(_recv("GID_renew", auto_renew=True, poll_s=5), metadata=MD)]
            assert again[0].status.code == pb.Code.MESSAGE_NOT_FOUND
            ack = spb.AckMessageRequest()
            ack.group.name, ack.topic.name = "GID_renew", "GT"
            ack.entries.add(message_id="01RENEW0", receipt_handle=held[0].system_properties.receipt_handle)
            assert (await stub.AckMessage(ack, metadata=MD)).status.code == pb.Code.OK  # the first handle still acks
            term = spb.NotifyClientTerminationRequest()
            term.group.name = "GID_renew"
            assert (await stub.NotifyClientTermination(term, metadata=MD)).status.code == pb.Code.OK
            other = (("x-mq-client-id", "it@2@0@y"),)
            back = [
                r async for r in stub.ReceiveMessage(_recv("GID_renew", auto_renew=False, poll_s=8), metadata=other)
            ]
            msgs = [r.message for r in back if r.HasField("message")]
            assert [(m.body, m.system_properties.delivery_attempt) for m in msgs] == [(b"m1", 2)]


async def test_a_grpc_port_in_use_fails_the_start_with_one_line(tmp_path: Path) -> None:
    import socket

    from broker.app import BrokerStartError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(BrokerStartError, match=f"gRPC endpoint on 127.0.0.1:{port}"):
            async with run_broker(None, tmp_path, enableProxy=True, grpcServerPort=port):
                pass
    async with run_broker(None, tmp_path, enableProxy=True, grpcServerPort=0) as b:  # the store was closed cleanly
        assert b.proxy is not None and b.proxy.port > 0


async def test_settings_without_publishing_or_subscription_close_the_stream(stub: Any) -> None:
    call = stub.Telemetry(metadata=MD)
    await call.write(spb.TelemetryCommand(settings=pb.Settings(client_type=pb.ClientType.PRODUCER)))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call.read()
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_tag_filter_delivers_only_matching_tags(broker: BrokerApp, stub: Any) -> None:
    await _telemetry(stub, _settings(pb.ClientType.SIMPLE_CONSUMER, "GID_tags"))
    for i, tag in enumerate(("TagA", "TagB", "TagA", "TagC")):
        m = pb.Message(body=f"t{i}".encode())
        m.topic.name = "GT"
        m.system_properties.message_id = f"01TAG{i}"
        m.system_properties.tag = tag
        assert (await stub.SendMessage(spb.SendMessageRequest(messages=[m]), metadata=MD)).status.code == pb.Code.OK
    req = _recv("GID_tags", auto_renew=False, poll_s=5)
    req.filter_expression.expression = "TagA || TagC"
    got = [r.message for r in [r async for r in stub.ReceiveMessage(req, metadata=MD)] if r.HasField("message")]
    assert sorted(m.body for m in got) == [b"t0", b"t2", b"t3"]
    assert {m.system_properties.tag for m in got} == {"TagA", "TagC"}
    bad = _recv("GID_tags", auto_renew=False, poll_s=5)
    bad.filter_expression.type = pb.FilterType.SQL
    replies = [r async for r in stub.ReceiveMessage(bad, metadata=MD)]
    assert len(replies) == 1
    first = replies[0]
    # J: the broker's POP answers SUBSCRIPTION_PARSE_FAILED and the proxy passes it on as 50001 (tests/reference)
    assert first.status.code == pb.Code.INTERNAL_SERVER_ERROR
    assert first.status.message == "parse the consumer's subscription failed"


async def test_a_receive_beyond_max_pop_polling_size_gets_too_many_requests(tmp_path: Path) -> None:
    import asyncio

    async with run_broker(None, tmp_path, enableProxy=True, grpcServerPort=0, maxPopPollingSize=1) as b:
        b.topics.create_if_absent("GT", 1, 6)
        assert b.proxy is not None
        async with grpc.aio.insecure_channel(f"127.0.0.1:{b.proxy.port}") as ch:
            stub = service_pb2_grpc.MessagingServiceStub(ch)
            held = stub.ReceiveMessage(_recv("GID_full", auto_renew=False, poll_s=10), metadata=MD)
            held_task = asyncio.ensure_future(held.read())
            await eventually(lambda: b.proxy.pop.held > 0, timeout=10, what="the broker holding the receive")
            second = [r async for r in stub.ReceiveMessage(_recv("GID_full", auto_renew=False, poll_s=5), metadata=MD)]
            assert [r.status.code for r in second] == [pb.Code.TOO_MANY_REQUESTS]
            held.cancel()
            with pytest.raises(asyncio.CancelledError):
                await held_task


async def test_namespace_header_wraps_names_and_replies_split_them(broker: BrokerApp, stub: Any) -> None:
    """``x-mq-namespace`` (or a Resource's ``resource_namespace``) puts topics and groups into the namespace
    (``ns%name``, as a namespaced 4.x client names them); names come back split into ``resource_namespace`` +
    ``name`` as RocketMQ 5's proxy returns them."""
    broker.topics.create_if_absent("ns5%GN", 1, 6)
    broker.topics.create_if_absent("GN", 1, 6)
    route = spb.QueryRouteRequest()
    route.topic.name = "GN"
    resp = await stub.QueryRoute(route, metadata=NS_MD)
    assert resp.status.code == pb.Code.OK
    assert {(q.topic.resource_namespace, q.topic.name) for q in resp.message_queues} == {("ns5", "GN")}

    # Telemetry (a stream) registers the consumer group in the namespace before anything is sent
    settings = pb.Settings(client_type=pb.ClientType.PUSH_CONSUMER)
    settings.subscription.group.name = "GID_ns"
    sub = settings.subscription.subscriptions.add()
    sub.topic.name = "GN"
    sub.expression.type, sub.expression.expression = pb.FilterType.TAG, "*"
    call = stub.Telemetry(metadata=NS_MD)
    await call.write(spb.TelemetryCommand(settings=settings))
    reply = await call.read()
    await call.done_writing()
    assert reply.status.code == pb.Code.OK
    assert (reply.settings.subscription.group.resource_namespace, reply.settings.subscription.group.name) == (
        "ns5",
        "GID_ns",
    )
    assert broker.clients.consumer_group("ns5%GID_ns") is not None

    m = pb.Message(body=b"in ns5")
    m.topic.name = "GN"
    m.system_properties.message_id = "01NS5"
    assert (await stub.SendMessage(spb.SendMessageRequest(messages=[m]), metadata=NS_MD)).status.code == pb.Code.OK
    # the namespaced topic got it, the plain one did not
    assert broker.store.get_max_offset_in_queue("ns5%GN", 0) == 1
    assert broker.store.get_max_offset_in_queue("GN", 0) == 0

    # a Resource's own resource_namespace counts too (no header)
    req = spb.ReceiveMessageRequest(batch_size=4)
    req.group.name, req.group.resource_namespace = "GID_ns", "ns5"
    req.message_queue.topic.name, req.message_queue.topic.resource_namespace = "GN", "ns5"
    req.message_queue.id = -1
    req.filter_expression.type, req.filter_expression.expression = pb.FilterType.TAG, "*"
    req.invisible_duration.FromSeconds(30)
    req.long_polling_timeout.FromSeconds(5)
    got = [r async for r in stub.ReceiveMessage(req, metadata=MD, timeout=10)]
    msgs = [r.message for r in got if r.HasField("message")]
    assert [x.body for x in msgs] == [b"in ns5"]
    assert (msgs[0].topic.resource_namespace, msgs[0].topic.name) == ("ns5", "GN")
    assert broker.groups.get("ns5%GID_ns") is not None  # the group was created under its wrapped name
    # stored as Apache stores a 5.x send: with CLUSTER, so a 4.x responder could answer it (request-reply)
    client = RemotingClient()
    try:
        (stored,) = messages(await pull(client, broker.addr, "CG_raw", "ns5%GN", 0, 0))
    finally:
        await client.close()
    assert stored.properties["CLUSTER"] == "DefaultCluster" and stored.body == b"in ns5"


async def test_without_a_namespace_names_are_as_sent(broker: BrokerApp, stub: Any) -> None:
    broker.topics.create_if_absent("ns5%GN", 1, 6)
    broker.topics.create_if_absent("GN", 1, 6)
    route = spb.QueryRouteRequest()
    route.topic.name = "GN"
    resp = await stub.QueryRoute(route, metadata=MD)
    assert {(q.topic.resource_namespace, q.topic.name) for q in resp.message_queues} == {("", "GN")}
    # a wrapped name sent as-is is split on the way back, as Apache's proxy does
    route.topic.name = "ns5%GN"
    resp = await stub.QueryRoute(route, metadata=MD)
    assert {(q.topic.resource_namespace, q.topic.name) for q in resp.message_queues} == {("ns5", "GN")}


async def test_an_unreadable_broker_refuses_grpc_receives_as_it_refuses_pulls(broker: BrokerApp, stub: Any) -> None:
    """brokerPermission without READ (changed at runtime): the consume service both front ends call refuses a
    remoting pull (NO_PERMISSION) and a gRPC receive (FORBIDDEN) with J's one remark; READ back, both pass."""
    broker.topics.create_if_absent("GP", 1, 6)
    await _telemetry(stub, _settings(pb.ClientType.SIMPLE_CONSUMER, "GID_perm", "GP"))
    receive = _recv("GID_perm", auto_renew=False, poll_s=5)
    receive.message_queue.topic.name = "GP"
    remark = "the broker[127.0.0.1] pulling message is forbidden"
    client = RemotingClient()
    try:
        async with AdminClient("127.0.0.1:1") as admin:
            await admin.update_broker_config(broker.addr, "brokerPermission", "2")
            resp = await pull(client, broker.addr, "GID_perm", "GP", 0, 0)
            assert (resp.code, resp.remark) == (ResponseCode.NO_PERMISSION, remark)
            replies = [r async for r in stub.ReceiveMessage(receive, metadata=MD)]
            assert [(r.status.code, r.status.message) for r in replies] == [(pb.Code.FORBIDDEN, remark)]
            await admin.update_broker_config(broker.addr, "brokerPermission", "6")
        m = pb.Message(body=b"readable again")
        m.topic.name = "GP"
        m.system_properties.message_id = "01PERM0"
        sent = await stub.SendMessage(spb.SendMessageRequest(messages=[m]), metadata=MD)
        assert sent.status.code == pb.Code.OK
        assert [x.body for x in messages(await pull(client, broker.addr, "GID_perm", "GP", 0, 0))] == [m.body]
        replies = [r async for r in stub.ReceiveMessage(receive, metadata=MD)]
        assert [r.message.body for r in replies if r.HasField("message")] == [m.body]
    finally:
        await client.close()
