"""CONSUME_MESSAGE_DIRECTLY (309) answered by a real PushConsumer against a real name server and broker.

The request travels the way the broker's relay sends it: from the broker's end of the consumer's own connection
(the channel the broker keeps from the consumer's heartbeats), with a record the broker stored as the body (read
back with VIEW_MESSAGE_BY_ID). The listener runs once on that message and the reply is ConsumeMessageDirectlyResult
JSON as fastjson writes it; offsets, process queues and retries stay as they were.
"""

from __future__ import annotations

import json
from typing import Any

from client import ConsumeResult, Message, MessageQueue, Producer, PullConsumer, PushConsumer, SendResult
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey
from protocol.msg_id import decode_offset_msg_id
from protocol.record_decode import decode_record
from protocol.remoting.client import RemotingClient
from tests.integration.client_support import Cluster, until

RAISE = "raise"  # a listener answer that means "raise RuntimeError('boom')"


async def send_one(ns_addr: str, topic: str, body: bytes) -> SendResult:
    async with Producer("PG_direct_tests", namesrv_addr=ns_addr) as p:
        return await p.send(Message(topic, body, tags="T"))


async def stored_record(cluster: Cluster, offset_msg_id: str) -> bytes:
    """The record exactly as the broker stored it (VIEW_MESSAGE_BY_ID), which is what the broker relays in 309."""
    _ip, _port, phys = decode_offset_msg_id(offset_msg_id)
    admin = RemotingClient()
    try:
        cmd = RemotingCommand.request(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": str(phys)})
        resp = await admin.invoke(cluster.broker.addr, cmd, 5)
    finally:
        await admin.close()
    assert resp.code == ResponseCode.SUCCESS, resp.remark
    return resp.body


async def consume_directly(
    cluster: Cluster, consumer: PushConsumer, record: bytes, *, group: str | None = None, msg_id: str = ""
) -> RemotingCommand:
    """Send 309 to ``consumer`` over its connection, from the broker's side, as the broker's relay does."""
    info = cluster.broker.clients.find_consumer_channel(consumer.group, consumer.instance.client_id)
    assert info is not None, "the broker knows the consumer's channel from its heartbeat"
    ext = {
        "consumerGroup": group if group is not None else consumer.group,
        "clientId": consumer.instance.client_id,
        "msgId": msg_id,
        "brokerName": cluster.broker.config.identity.broker_name,
    }
    return await info.channel.invoke(RemotingCommand.request(RequestCode.CONSUME_MESSAGE_DIRECTLY, ext, record), 5)


def result_of(resp: RemotingCommand) -> dict[str, Any]:
    assert resp.code == ResponseCode.SUCCESS, resp.remark
    doc: dict[str, Any] = json.loads(resp.body)
    assert isinstance(doc["spentTimeMills"], int) and doc["spentTimeMills"] >= 0
    # fastjson: keys in alphabetical order, null fields left out
    assert list(doc) == sorted(doc)
    return doc


def untouched_state(c: PushConsumer, mq: MessageQueue) -> tuple[Any, ...]:
    pq = c.process_queue(mq)
    assert pq is not None
    return (c.offset_store.read_memory(mq), len(pq), dict(c.stats))


async def test_concurrent_listener_runs_once_on_the_given_message(cluster: Cluster) -> None:
    await cluster.create_topic("TopicDirect", 1)
    seen: list[tuple[str, bytes]] = []
    answer: list[object] = [ConsumeResult.SUCCESS]

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.extend((m.topic, m.body) for m in msgs)
        if answer[0] == RAISE:
            raise RuntimeError("boom")
        return answer[0]  # type: ignore[return-value]

    c = PushConsumer("CG_direct", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicDirect", "*", listener)
    async with c:
        await until(lambda: any(q.topic == "TopicDirect" for q in c.assignment), what="TopicDirect's queue")
        sent = await send_one(cluster.ns_addr, "TopicDirect", b"hello")
        await until(lambda: seen == [("TopicDirect", b"hello")], what="the normal delivery")
        mq = sent.message_queue
        await until(lambda: c.offset_store.read_memory(mq) == 1, what="the offset to move past the message")
        await c.persist_offsets()
        before = untouched_state(c, mq)
        record = await stored_record(cluster, sent.offset_msg_id)

        resp = await consume_directly(cluster, c, record, msg_id=sent.offset_msg_id)
        doc = result_of(resp)
        assert doc == {
            "autoCommit": True,
            "consumeResult": "CR_SUCCESS",
            "order": False,
            "spentTimeMills": doc["spentTimeMills"],
        }
        assert resp.body.startswith(b'{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,"spentTimeMills":')
        assert seen[-1] == ("TopicDirect", b"hello") and len(seen) == 2

        answer[0] = ConsumeResult.RECONSUME_LATER
        assert result_of(await consume_directly(cluster, c, record))["consumeResult"] == "CR_LATER"
        answer[0] = None
        assert result_of(await consume_directly(cluster, c, record))["consumeResult"] == "CR_RETURN_NULL"
        answer[0] = ConsumeResult.SUSPEND_CURRENT_QUEUE_A_MOMENT  # not a concurrent answer: J leaves it unset
        doc = result_of(await consume_directly(cluster, c, record))
        assert "consumeResult" not in doc and doc["order"] is False
        answer[0] = RAISE
        doc = result_of(await consume_directly(cluster, c, record))
        assert doc["consumeResult"] == "CR_THROW_EXCEPTION"
        assert doc["remark"].startswith("RuntimeError: boom, listener(test_client_consume_directly.py:"), doc
        assert (doc["autoCommit"], doc["order"]) == (True, False)
        assert seen == [("TopicDirect", b"hello")] * 6

        # nothing but the listener ran: no offset moved, no process queue grew, nothing was sent back
        assert untouched_state(c, mq) == before
        assert c.stats["consumed_failed"] == c.stats["sent_back"] == 0
        await c.persist_offsets()
        assert cluster.broker.offsets.query("CG_direct", "TopicDirect", mq.queue_id) == 1


async def test_message_from_the_retry_topic_gets_its_topic_back(cluster: Cluster) -> None:
    await cluster.create_topic("TopicDirectRetry", 1)
    seen: list[MessageExt] = []

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.extend(msgs)
        return ConsumeResult.RECONSUME_LATER if len(seen) == 1 else ConsumeResult.SUCCESS

    c = PushConsumer("CG_direct_retry", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicDirectRetry", "*", listener)
    async with c:
        await until(lambda: any(q.topic == "TopicDirectRetry" for q in c.assignment), what="the topic's queue")
        await send_one(cluster.ns_addr, "TopicDirectRetry", b"again")
        await until(lambda: len(seen) == 2, timeout=30, what="the redelivery through %RETRY%CG_direct_retry")
        redelivered = seen[1]
        record = await stored_record(cluster, redelivered.offset_msg_id)
        stored, _end = decode_record(record)
        assert stored.topic == "%RETRY%CG_direct_retry"
        assert stored.properties[PropertyKey.RETRY_TOPIC] == "TopicDirectRetry"

        doc = result_of(await consume_directly(cluster, c, record))
        assert doc["consumeResult"] == "CR_SUCCESS"
        assert len(seen) == 3
        assert (seen[2].topic, seen[2].body) == ("TopicDirectRetry", b"again")


async def test_orderly_consumer_answers_with_order_true(cluster: Cluster) -> None:
    await cluster.create_topic("TopicDirectOrderly", 1)
    seen: list[bytes] = []
    answer: list[object] = [ConsumeResult.SUCCESS]

    def listener(msgs: list[MessageExt]) -> ConsumeResult:  # a plain function: runs in the consumer's threads
        seen.extend(m.body for m in msgs)
        if answer[0] == RAISE:
            raise ValueError("bad payload")
        return answer[0]  # type: ignore[return-value]

    c = PushConsumer("CG_direct_orderly", namesrv_addr=cluster.ns_addr, orderly=True)
    c.subscribe("TopicDirectOrderly", "*", listener)
    async with c:
        await until(lambda: any(q.topic == "TopicDirectOrderly" for q in c.assignment), what="the locked queue")
        sent = await send_one(cluster.ns_addr, "TopicDirectOrderly", b"in-order")
        await until(lambda: seen == [b"in-order"], what="the normal delivery")
        mq = sent.message_queue
        await until(lambda: c.offset_store.read_memory(mq) == 1, what="the offset to move past the message")
        before = untouched_state(c, mq)
        record = await stored_record(cluster, sent.offset_msg_id)

        resp = await consume_directly(cluster, c, record)
        assert resp.body.startswith(b'{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":true,"spentTimeMills":')
        answer[0] = ConsumeResult.SUSPEND_CURRENT_QUEUE_A_MOMENT
        assert result_of(await consume_directly(cluster, c, record))["consumeResult"] == "CR_LATER"
        answer[0] = ConsumeResult.RECONSUME_LATER
        assert result_of(await consume_directly(cluster, c, record))["consumeResult"] == "CR_LATER"
        answer[0] = RAISE
        doc = result_of(await consume_directly(cluster, c, record))
        assert (doc["consumeResult"], doc["order"], doc["autoCommit"]) == ("CR_THROW_EXCEPTION", True, True)
        assert doc["remark"].startswith("ValueError: bad payload, listener(test_client_consume_directly.py:"), doc
        assert seen == [b"in-order"] * 5
        assert untouched_state(c, mq) == before


async def test_unknown_group_pull_group_and_bad_requests(cluster: Cluster) -> None:
    await cluster.create_topic("TopicDirectErr", 1)
    seen: list[bytes] = []

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.extend(m.body for m in msgs)
        return ConsumeResult.SUCCESS

    c = PushConsumer("CG_direct_err", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicDirectErr", "*", listener)
    lite = PullConsumer("CG_direct_lite", instance=c.instance)
    lite.subscribe("TopicDirectErr")
    async with c, lite:
        sent = await send_one(cluster.ns_addr, "TopicDirectErr", b"x")
        await until(lambda: seen == [b"x"], what="the normal delivery")
        record = await stored_record(cluster, sent.offset_msg_id)

        resp = await consume_directly(cluster, c, record, group="CG_nobody")
        assert (resp.code, resp.remark) == (
            ResponseCode.SYSTEM_ERROR,
            "The Consumer Group <CG_nobody> not exist in this consumer",
        )
        # a lite pull consumer of this client has no listener: J answers only for push consumers
        assert "CG_direct_lite" in c.instance.consumers
        resp = await consume_directly(cluster, c, record, group="CG_direct_lite")
        assert (resp.code, resp.remark) == (
            ResponseCode.SYSTEM_ERROR,
            "The Consumer Group <CG_direct_lite> not exist in this consumer",
        )

        info = cluster.broker.clients.find_consumer_channel(c.group, c.instance.client_id)
        assert info is not None
        no_group = RemotingCommand.request(RequestCode.CONSUME_MESSAGE_DIRECTLY, {"msgId": "x"}, record)
        resp = await info.channel.invoke(no_group, 5)
        assert (resp.code, resp.remark) == (ResponseCode.SYSTEM_ERROR, "the custom field <consumerGroup> is null")
        resp = await consume_directly(cluster, c, b"")
        assert resp.code == ResponseCode.SYSTEM_ERROR
        assert (resp.remark or "").startswith("the message record does not decode: ")
        resp = await consume_directly(cluster, c, record[:40])
        assert resp.code == ResponseCode.SYSTEM_ERROR
        assert (resp.remark or "").startswith("the message record does not decode: ")
        assert seen == [b"x"]  # no listener call for any of them


async def test_admin_to_broker_to_consumer_end_to_end(cluster: Cluster) -> None:
    """What ``mqadmin consumeMessage`` / Dashboard do: 309 to the broker with the client id and offset msgId; the
    broker reads the message, relays it to that consumer and hands back the consumer's answer."""
    await cluster.create_topic("TopicDirectE2E", 1)
    seen: list[bytes] = []

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.extend(m.body for m in msgs)
        return ConsumeResult.SUCCESS

    c = PushConsumer("CG_direct_e2e", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicDirectE2E", "*", listener)
    async with c:
        await until(lambda: any(q.topic == "TopicDirectE2E" for q in c.assignment), what="the topic's queue")
        sent = await send_one(cluster.ns_addr, "TopicDirectE2E", b"via-broker")
        await until(lambda: seen == [b"via-broker"], what="the normal delivery")
        admin = RemotingClient()
        try:
            ext = {
                "consumerGroup": "CG_direct_e2e",
                "clientId": c.instance.client_id,
                "msgId": sent.offset_msg_id,
            }
            cmd = RemotingCommand.request(RequestCode.CONSUME_MESSAGE_DIRECTLY, ext)
            doc = result_of(await admin.invoke(cluster.broker.addr, cmd, 10))
            assert doc["consumeResult"] == "CR_SUCCESS" and doc["order"] is False
            assert seen == [b"via-broker", b"via-broker"]
            ext["clientId"] = "no-such-client@x"
            resp = await admin.invoke(
                cluster.broker.addr, RemotingCommand.request(RequestCode.CONSUME_MESSAGE_DIRECTLY, ext), 10
            )
            assert resp.code == ResponseCode.CONSUMER_NOT_ONLINE, resp.remark
        finally:
            await admin.close()
