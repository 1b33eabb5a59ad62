"""Namespaces on the gRPC endpoint: ``x-mq-namespace`` (or a Resource's ``resource_namespace``) puts topics and
groups into the namespace (``ns%name``, as a namespaced 4.x client names them), and names come back split into
``resource_namespace`` + ``name`` as RocketMQ 5's proxy returns them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from broker.app import BrokerApp
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pb import service_pb2 as spb
from broker.proxy.pb import service_pb2_grpc
from protocol.remoting import RemotingClient
from tests.harness import run_broker
from tests.integration.broker_wire import messages, pull

MD = (("x-mq-client-id", "ns@1@0@x"), ("x-mq-language", "PYTHON"), ("x-mq-client-version", "5.1.2"))
NS_MD = (*MD, ("x-mq-namespace", "ns5"))


@pytest.fixture()
async def broker(tmp_path: Path) -> AsyncIterator[BrokerApp]:
    async with run_broker(None, tmp_path, enableProxy=True, grpcServerPort=0) as b:
        b.topics.create_if_absent("ns5%GN", 1, 6)
        b.topics.create_if_absent("GN", 1, 6)
        yield b


@pytest.fixture()
async def stub(broker: BrokerApp) -> AsyncIterator[Any]:
    assert broker.proxy is not None
    async with grpc.aio.insecure_channel(f"127.0.0.1:{broker.proxy.port}") as ch:
        yield service_pb2_grpc.MessagingServiceStub(ch)


async def test_header_namespace_wraps_and_splits(broker: BrokerApp, stub: Any) -> None:
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
    route = spb.QueryRouteRequest()
    route.topic.name = "GN"
    resp = await stub.QueryRoute(route, metadata=MD)
    assert {(q.topic.resource_namespace, q.topic.name) for q in resp.message_queues} == {("", "GN")}
    # a wrapped name sent as-is is split on the way back, as Apache's proxy does
    route.topic.name = "ns5%GN"
    resp = await stub.QueryRoute(route, metadata=MD)
    assert {(q.topic.resource_namespace, q.topic.name) for q in resp.message_queues} == {("ns5", "GN")}
