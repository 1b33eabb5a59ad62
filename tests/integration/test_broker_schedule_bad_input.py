"""Delayed messages (messageDelayLevel "1s 2s": delivered to their real topic after the delay, held pulls woken by
the delivery, progress surviving a restart) and bad input (each answered with RocketMQ's code and a remark while
the broker keeps serving).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import (
    PULL_SUBSCRIPTION,
    PULL_SUSPEND,
    batch_body,
    messages,
    pull,
    send,
    send_cmd,
    simple_cmd,
)


async def test_delayed_message_delivered_after_its_delay(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, messageDelayLevel="1s 2s") as broker:
        await send(client, broker.addr, "DelT", b"now")
        t0 = time.monotonic()
        resp = await send(client, broker.addr, "DelT", b"later", props={"DELAY": "1"}, tags="TagD")
        assert resp.code == ResponseCode.SUCCESS, resp.remark
        assert (await pull(client, broker.addr, "G", "DelT", 0, 1)).code == ResponseCode.PULL_NOT_FOUND
        held = await pull(
            client,
            broker.addr,
            "G",
            "DelT",
            0,
            1,
            sys_flag=PULL_SUSPEND | PULL_SUBSCRIPTION,
            suspend_ms=10_000,
            timeout=15,
        )
        elapsed = time.monotonic() - t0
        assert held.code == ResponseCode.SUCCESS
        (msg,) = messages(held)
        assert msg.body == b"later" and msg.topic == "DelT" and msg.queue_id == 0
        # the delivered record keeps DELAY, as Apache RocketMQ's does (tests/reference/test_java4_client.py)
        assert msg.properties["REAL_TOPIC"] == "DelT" and msg.properties["DELAY"] == "1"
        assert msg.properties["TAGS"] == "TagD"
        assert 0.9 <= elapsed < 5, elapsed
        # a level above the table's last is clamped to it
        big = await send(client, broker.addr, "DelT", b"clamped", props={"DELAY": "9"})
        assert big.code == ResponseCode.SUCCESS
        sched = await pull(client, broker.addr, "G", "SCHEDULE_TOPIC_XXXX", 1, 0)
        assert [m.body for m in messages(sched)] == [b"clamped"]


async def test_delayed_messages_survive_restart(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns:
        async with run_broker(ns, tmp_path, messageDelayLevel="1s 2s") as broker:
            await send(client, broker.addr, "DelR", b"a", props={"DELAY": "2"})
        async with run_broker(ns, tmp_path, messageDelayLevel="1s 2s") as again:
            got = await pull(
                client,
                again.addr,
                "G",
                "DelR",
                0,
                0,
                sys_flag=PULL_SUSPEND | PULL_SUBSCRIPTION,
                suspend_ms=10_000,
                timeout=15,
            )
            assert got.code == ResponseCode.SUCCESS and [m.body for m in messages(got)] == [b"a"]
        async with run_broker(ns, tmp_path, messageDelayLevel="1s 2s") as third:
            # delivered once; the persisted delay offset keeps it from being delivered again
            assert third.schedule is not None and third.schedule.offset(2) == 1


@pytest.mark.parametrize(
    ("cmd_kwargs", "code", "remark_part"),
    [
        ({"topic": "NoSuchTopic"}, ResponseCode.TOPIC_NOT_EXIST, "topic[NoSuchTopic] not exist, apply first please!"),
        ({"topic": "Known", "queue_id": 9}, ResponseCode.SYSTEM_ERROR, "request queueId[9] is illegal"),
        ({"topic": "bad topic!"}, ResponseCode.SYSTEM_ERROR, "illegal characters"),
        ({"topic": "x" * 128}, ResponseCode.SYSTEM_ERROR, "longer than topic max length"),
        ({"topic": "SCHEDULE_TOPIC_XXXX"}, ResponseCode.NO_PERMISSION, "is forbidden"),
    ],
)
async def test_bad_sends(
    tmp_path: Path, cmd_kwargs: dict[str, object], code: int, remark_part: str, client: RemotingClient
) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, autoCreateTopicEnable=False) as broker:
        from protocol.bodies import TopicConfig

        broker.topics.put(TopicConfig.with_queues("Known", 2))
        topic = str(cmd_kwargs.pop("topic"))
        resp = await client.invoke(broker.addr, send_cmd(topic, b"x", **cmd_kwargs))  # type: ignore[arg-type]
        assert resp.code == code
        assert remark_part in (resp.remark or "")
        ok = await send(client, broker.addr, "Known", b"still serving")
        assert ok.code == ResponseCode.SUCCESS


async def test_malformed_and_oversized(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, maxMessageSize=1024) as broker:
        big = await send(client, broker.addr, "Size", b"x" * 1025)
        assert big.code == ResponseCode.MESSAGE_ILLEGAL and big.remark
        missing = send_cmd("Size", b"x")
        del missing.ext_fields["producerGroup"]
        r = await client.invoke(broker.addr, missing)
        assert r.code == ResponseCode.SYSTEM_ERROR and "producerGroup" in (r.remark or "")
        nan = send_cmd("Size", b"x")
        nan.ext_fields["queueId"] = "abc"
        r = await client.invoke(broker.addr, nan)
        assert r.code == ResponseCode.SYSTEM_ERROR and r.remark
        bad_pull = simple_cmd(RequestCode.PULL_MESSAGE, consumerGroup="G", topic="Size")
        r = await client.invoke(broker.addr, bad_pull)
        assert r.code == ResponseCode.SYSTEM_ERROR and r.remark
        bad_hb = RemotingCommand.request(RequestCode.HEART_BEAT, {}, b"{not json")
        r = await client.invoke(broker.addr, bad_hb)
        assert r.code == ResponseCode.SYSTEM_ERROR
        unknown = await client.invoke(broker.addr, RemotingCommand.request(9999, {}))
        assert unknown.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
        await send(client, broker.addr, "Size", b"ok")
        q = await pull(client, broker.addr, "G", "Size", 0, 0, timeout=5)
        assert q.code == ResponseCode.SUCCESS and [m.body for m in messages(q)] == [b"ok"]
        bad_q = await pull(client, broker.addr, "G", "Size", 77, 0)
        assert bad_q.code == ResponseCode.SYSTEM_ERROR and "queueId[77] is illegal" in (bad_q.remark or "")
        no_topic = await pull(client, broker.addr, "G", "Nope", 0, 0)
        assert no_topic.code == ResponseCode.TOPIC_NOT_EXIST


async def test_pull_without_heartbeat_subscription(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        await send(client, broker.addr, "NoSub", b"x")
        r = await pull(client, broker.addr, "Unknown", "NoSub", 0, 0, sys_flag=0)
        assert r.code == ResponseCode.SUBSCRIPTION_NOT_EXIST
        r = await pull(client, broker.addr, "G", "NoSub", 0, 0, sub="TagA ||", sys_flag=PULL_SUBSCRIPTION)
        assert r.code in (ResponseCode.PULL_RETRY_IMMEDIATELY, ResponseCode.PULL_NOT_FOUND)
        await asyncio.sleep(0)


async def test_max_message_size_counts_the_whole_record(tmp_path: Path) -> None:
    """J checks the stored record (header + topic + body + properties), not the body alone: a body of exactly
    maxMessageSize with empty properties is refused; one that leaves room for the record's header is stored."""
    client = RemotingClient()
    limit = 64 * 1024
    try:
        async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, maxMessageSize=limit) as broker:
            exact = send_cmd("WholeRecord", b"x" * limit)
            exact.ext_fields["properties"] = ""
            r = await client.invoke(broker.addr, exact)
            assert r.code == ResponseCode.MESSAGE_ILLEGAL, r
            batch = send_cmd("WholeRecord", batch_body([(b"y" * (limit - 40), {})]))  # the batch body fits
            batch.code = RequestCode.SEND_BATCH_MESSAGE
            r = await client.invoke(broker.addr, batch)
            assert r.code == ResponseCode.MESSAGE_ILLEGAL, r
            fits = send_cmd("WholeRecord", b"x" * (limit - 1024))
            r = await client.invoke(broker.addr, fits)
            assert r.code == ResponseCode.SUCCESS, r
    finally:
        await client.close()
