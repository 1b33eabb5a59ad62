"""Request-reply (RIP-16) against a real broker: ``Producer.request`` answered by a push consumer through
``client.reply.create_reply_message``, timeouts, concurrent requests matched by correlation id, and the broker's
SEND_REPLY_MESSAGE(_V2) / PUSH_REPLY_MESSAGE_TO_CLIENT frames seen raw."""

from __future__ import annotations

import asyncio
import json

import pytest

from client import ConsumeResult, Message, MQClientError, Producer, PushConsumer, ReceivedMessage
from client.errors import ReplyTimeoutError
from client.reply import create_reply_message
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.message_ext import MessageExt
from protocol.message_properties import decode_properties
from protocol.remoting import HandlerRegistry, RemotingClient
from protocol.remoting.handler import RequestContext
from tests.eventually import eventually
from tests.integration.broker_wire import messages, props_string, pull, send_cmd
from tests.integration.client_support import Cluster

REPLY_TOPIC = "DefaultCluster_REPLY_TOPIC"


async def _responder(cluster: Cluster, topic: str, namespace: str = "") -> tuple[Producer, PushConsumer]:
    """A push consumer on ``topic`` that answers every request with ``pong:<body>`` through its own producer."""
    responder = Producer("PG_responder", namesrv_addr=cluster.ns_addr, namespace=namespace)
    await responder.start()

    async def listener(msgs: list[ReceivedMessage]) -> ConsumeResult:
        for m in msgs:
            await responder.send(create_reply_message(m, b"pong:" + m.body))
        return ConsumeResult.SUCCESS

    consumer = PushConsumer(
        "CG_responder", namesrv_addr=cluster.ns_addr, consume_from_where="FIRST_OFFSET", namespace=namespace
    )
    consumer.subscribe(topic, "*", listener)
    await consumer.start()
    return responder, consumer


async def test_request_gets_the_reply(cluster: Cluster) -> None:
    await cluster.create_topic("TopicRpc", 2)
    responder, consumer = await _responder(cluster, "TopicRpc")
    try:
        async with Producer("PG_requester", namesrv_addr=cluster.ns_addr) as requester:
            reply = await requester.request(Message("TopicRpc", b"ping", keys=["k1"]), timeout=15)
            assert reply.body == b"pong:ping"
            assert reply.topic == REPLY_TOPIC
            props = reply.properties
            assert props["MSG_TYPE"] == "reply"
            assert props["REPLY_TO_CLIENT"] == requester.instance.client_id
            assert props["TTL"] == "15000"
            assert int(props["ARRIVE_TIME"]) >= int(props["PUSH_REPLY_TIME"]) > 0
            assert len(requester.instance.replies) == 0  # nothing left waiting
            # concurrent requests each get their own answer (matched by CORRELATION_ID)
            futures = [await requester.request_async(Message("TopicRpc", f"n{i}".encode()), 15) for i in range(5)]
            got = [(await f).body for f in futures]
            assert got == [f"pong:n{i}".encode() for i in range(5)]
            ids = {(await f).properties["CORRELATION_ID"] for f in futures}
            assert len(ids) == 5
    finally:
        await consumer.close()
        await responder.close()
    # storeReplyMessageEnable (default true): the replies are in the reply topic too
    assert cluster.broker.store.get_max_offset_in_queue(REPLY_TOPIC, 0) == 6


async def test_request_without_a_responder_times_out(cluster: Cluster) -> None:
    await cluster.create_topic("TopicRpcIdle", 1)
    async with Producer("PG_requester2", namesrv_addr=cluster.ns_addr) as requester:
        with pytest.raises(ReplyTimeoutError, match="send request message to TopicRpcIdle OK, but wait reply"):
            await requester.request(Message("TopicRpcIdle", b"anyone?"), timeout=0.5)
        assert len(requester.instance.replies) == 0


async def test_request_to_a_missing_topic_fails_as_a_send(cluster: Cluster) -> None:
    cluster.broker.topics.update_features(
        cluster.broker.config.features.model_copy(update={"auto_create_topic_enable": False})
    )
    async with Producer("PG_requester3", namesrv_addr=cluster.ns_addr, send_timeout_ms=1000) as requester:
        with pytest.raises(MQClientError, match="send request message to NoSuchTopic fail"):
            await requester.request(Message("NoSuchTopic", b"x"), timeout=1)
        assert len(requester.instance.replies) == 0


def test_create_reply_message_needs_cluster() -> None:
    with pytest.raises(MQClientError, match=r"property\[CLUSTER\] is null"):
        create_reply_message(MessageExt("T", b"x", properties={"CORRELATION_ID": "c"}), b"y")
    reply = create_reply_message(
        MessageExt("T", b"x", properties={"CLUSTER": "C1", "CORRELATION_ID": "c", "REPLY_TO_CLIENT": "r", "TTL": "9"}),
        b"y",
    )
    assert reply.topic == "C1_REPLY_TOPIC" and reply.body == b"y"
    assert reply.properties == {"MSG_TYPE": "reply", "CORRELATION_ID": "c", "REPLY_TO_CLIENT": "r", "TTL": "9"}


async def test_sent_messages_carry_cluster_region_and_trace_switch(cluster: Cluster, client: RemotingClient) -> None:
    await cluster.create_topic("TopicCl", 1)
    resp = await client.invoke(cluster.broker.addr, send_cmd("TopicCl", b"b", props={"a": "1"}), 5)
    assert resp.code == ResponseCode.SUCCESS
    msgs = messages(await pull(client, cluster.broker.addr, "CG_cl", "TopicCl", 0, 0))
    props = msgs[0].properties
    # as Apache RocketMQ 5.5.0 stores a single send (seen with the same raw frame)
    assert props["CLUSTER"] == "DefaultCluster" and props["a"] == "1"
    assert props["MSG_REGION"] == "DefaultRegion" and props["TRACE_ON"] == "true"
    # a value the producer sent is replaced, not duplicated
    resp = await client.invoke(cluster.broker.addr, send_cmd("TopicCl", b"c", props={"CLUSTER": "Fake"}), 5)
    assert resp.code == ResponseCode.SUCCESS
    (m2,) = messages(await pull(client, cluster.broker.addr, "CG_cl", "TopicCl", 0, 1))
    assert m2.properties["CLUSTER"] == "DefaultCluster"


def _reply_cmd(code: int, client_id: str, correlation_id: str, queue_id: int = -1) -> RemotingCommand:
    props = {"MSG_TYPE": "reply", "CORRELATION_ID": correlation_id, "REPLY_TO_CLIENT": client_id, "TTL": "3000"}
    cmd = send_cmd(REPLY_TOPIC, b"the answer", props=props, queue_id=queue_id, v2=code == 325, group="PG_raw")
    return RemotingCommand.request(code, cmd.ext_fields, cmd.body)


async def test_raw_reply_to_an_unknown_client_is_refused_but_stored(cluster: Cluster, client: RemotingClient) -> None:
    resp = await client.invoke(cluster.broker.addr, _reply_cmd(325, "10.0.0.1@nobody", "c-1"), 5)
    assert resp.code == ResponseCode.SYSTEM_ERROR
    assert resp.remark == "push reply message fail, channel of <10.0.0.1@nobody> not found."
    assert resp.ext_fields["MSG_REGION"] == "DefaultRegion" and "TRACE_ON" in resp.ext_fields
    assert resp.ext_fields["queueOffset"] == "0" and len(resp.ext_fields["msgId"]) == 32  # stored: its offset msgId
    assert cluster.broker.store.get_max_offset_in_queue(REPLY_TOPIC, 0) == 1


@pytest.mark.parametrize("code", [324, 325])
async def test_raw_reply_is_pushed_to_the_requesters_connection(cluster: Cluster, code: int) -> None:
    pushed: list[RemotingCommand] = []

    async def on_push(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        pushed.append(cmd)
        return cmd.make_response()

    registry = HandlerRegistry()
    registry.register(RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, on_push)
    requester = RemotingClient(registry)
    responder = RemotingClient()
    try:
        hb = {"clientID": "127.0.0.1@raw-requester", "producerDataSet": [{"groupName": "PG_raw_req"}]}
        ok = await requester.invoke(
            cluster.broker.addr, RemotingCommand.request(RequestCode.HEART_BEAT, {}, json.dumps(hb).encode()), 5
        )
        assert ok.code == ResponseCode.SUCCESS
        resp = await responder.invoke(cluster.broker.addr, _reply_cmd(code, "127.0.0.1@raw-requester", "c-9", 0), 5)
        assert resp.code == ResponseCode.SUCCESS, resp.remark
        await eventually(lambda: pushed, what="the 326 push")
    finally:
        await requester.close()
        await responder.close()
    push = pushed[0]
    ext = push.ext_fields
    assert push.code == RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT and push.body == b"the answer"
    assert ext["producerGroup"] == "PG_raw" and ext["topic"] == REPLY_TOPIC and ext["queueId"] == "0"
    assert ext["storeHost"] == cluster.broker.addr and ext["bornHost"].startswith("127.0.0.1:")
    assert int(ext["storeTimestamp"]) > 0 and ext["sysFlag"] == "0" and ext["defaultTopic"] == "TBW102"
    props = decode_properties(ext["properties"])
    assert props["CORRELATION_ID"] == "c-9" and props["MSG_TYPE"] == "reply" and int(props["PUSH_REPLY_TIME"]) > 0
    # as Apache 5.5.0 pushes it: MSG_REGION and TRACE_ON added, no CLUSTER
    assert props["MSG_REGION"] == "DefaultRegion" and props["TRACE_ON"] == "true" and "CLUSTER" not in props
    assert props_string({"a": "b"}) == "a\x01b\x02"


async def test_raw_reply_push_failure_and_store_off(tmp_path: object) -> None:
    from pathlib import Path

    from tests.harness import run_broker, run_namesrv

    assert isinstance(tmp_path, Path)
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, storeReplyMessageEnable=False) as broker:
        client = RemotingClient()
        try:
            resp = await client.invoke(broker.addr, _reply_cmd(325, "x@y", "c-2"), 5)
            assert resp.code == ResponseCode.SYSTEM_ERROR
            assert "msgId" not in resp.ext_fields  # not stored
            assert broker.store.get_max_offset_in_queue(REPLY_TOPIC, 0) == 0
            bad = await client.invoke(broker.addr, _reply_cmd(325, "x@y", "c-3", queue_id=5), 5)
            assert bad.code == ResponseCode.SYSTEM_ERROR and "queueId[5] is illegal" in (bad.remark or "")
        finally:
            await client.close()


async def test_late_reply_is_answered_and_dropped(cluster: Cluster) -> None:
    async with Producer("PG_late", namesrv_addr=cluster.ns_addr) as p:
        await cluster.create_topic("TopicLate", 1)
        await p.send(Message("TopicLate", b"warm"))  # heartbeats the producer to the broker
        responder = RemotingClient()
        try:
            resp = await responder.invoke(cluster.broker.addr, _reply_cmd(325, p.instance.client_id, "c-none"), 5)
        finally:
            await responder.close()
        assert resp.code == ResponseCode.SUCCESS  # J answers SUCCESS for a reply nobody waits for
        assert len(p.instance.replies) == 0


async def test_sync_producer_request_and_namespaced_sync_send(cluster: Cluster) -> None:
    """``client.sync.Producer.request`` (its loop thread) against an async responder; a sync send with a namespace
    goes through the async producer (the direct path would skip the wrapping)."""
    from client.sync import Producer as SyncProducer

    await cluster.create_topic("TopicRpcSync", 1)
    await cluster.create_topic("ns7%TopicSync", 1)
    responder, consumer = await _responder(cluster, "TopicRpcSync")
    try:
        with SyncProducer("PG_sync_req", namesrv_addr=cluster.ns_addr) as p:
            reply = await asyncio.to_thread(p.request, Message("TopicRpcSync", b"sync"), 15)
        assert reply.body == b"pong:sync"
        with SyncProducer("PG_sync_ns", namesrv_addr=cluster.ns_addr, namespace="ns7") as p:
            for _ in range(2):  # the second send has its route cached: the direct path must still wrap
                r = await asyncio.to_thread(p.send, Message("TopicSync", b"x"))
                assert r.message_queue.topic == "ns7%TopicSync"
    finally:
        await consumer.close()
        await responder.close()
    assert cluster.broker.store.get_max_offset_in_queue("ns7%TopicSync", 0) == 2


async def test_request_reply_in_a_namespace(cluster: Cluster) -> None:
    """Requester and responder in a namespace: the request topic is wrapped, the reply topic (the broker's own
    <cluster>_REPLY_TOPIC) is not."""
    await cluster.create_topic("ns8%TopicRpcNs", 1)
    responder, consumer = await _responder(cluster, "TopicRpcNs", namespace="ns8")
    try:
        async with Producer("PG_req_ns", namesrv_addr=cluster.ns_addr, namespace="ns8") as requester:
            reply = await requester.request(Message("TopicRpcNs", b"ns"), timeout=15)
    finally:
        await consumer.close()
        await responder.close()
    assert reply.body == b"pong:ns" and reply.topic == REPLY_TOPIC
    assert cluster.broker.store.get_max_offset_in_queue("ns8%TopicRpcNs", 0) == 1
