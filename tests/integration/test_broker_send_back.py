"""CONSUMER_SEND_MSG_BACK end to end with the real client: RECONSUME_LATER brings a message back from
%RETRY%<group> with reconsumeTimes 1, 2, … and then parks it in %DLQ%<group> with its original topic, keys and body;
plus the wire-level error replies.

No fixed ports; waits poll with a bounded deadline (asyncio events set by the listener).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from client import ConsumeResult, Message, Producer, PushConsumer
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import messages, pull, send, simple_cmd

FAST_LEVELS = " ".join(["1s"] * 18)


async def test_retry_then_dlq_with_real_client(tmp_path: Path, client: RemotingClient) -> None:
    group = "CID_retry"
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, messageDelayLevel=FAST_LEVELS) as broker:
        cfg = {"groupName": group, "retryMaxTimes": 2, "retryQueueNums": 1}
        resp = await client.invoke(
            broker.addr,
            RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, json.dumps(cfg).encode()),
            3.0,
        )
        assert resp.code == ResponseCode.SUCCESS, resp.remark
        seen: list[tuple[str, int, str, bytes]] = []
        third = asyncio.Event()

        def listener(msgs: list) -> ConsumeResult:  # type: ignore[type-arg]
            for m in msgs:
                seen.append((m.topic, m.reconsume_times, m.properties.get("KEYS", ""), m.body))
            if len(seen) >= 3:
                third.set()
            return ConsumeResult.RECONSUME_LATER

        async with Producer("PID_retry", namesrv_addr=ns.addr) as producer:
            await producer.send(Message("RetryTopic", b"poison", keys=["k-poison"]))
            consumer = PushConsumer(
                group,
                namesrv_addr=ns.addr,
                consume_from_where="FIRST_OFFSET",
                max_reconsume_times=2,
                rebalance_interval=0.5,
            )
            consumer.subscribe("RetryTopic", "*", listener)
            async with consumer:
                await asyncio.wait_for(third.wait(), 30)
                # the third failure sends it to the DLQ (reconsumeTimes 2 >= max 2)
                dlq = f"%DLQ%{group}"
                await eventually(lambda: broker.store.get_max_offset_in_queue(dlq, 0) >= 1, what="the DLQ message")
        assert [(t, r) for t, r, _k, _b in seen[:3]] == [("RetryTopic", 0), ("RetryTopic", 1), ("RetryTopic", 2)]
        assert all(k == "k-poison" and b == b"poison" for _t, _r, k, b in seen)
        assert broker.topics.get(dlq).perm == 6 and broker.topics.get(dlq).read_queue_nums == 1
        r = await pull(client, broker.addr, "CID_dlq_reader", dlq, 0, 0, suspend_ms=0)
        assert r.code == ResponseCode.SUCCESS, r.remark
        [m] = messages(r)
        assert m.body == b"poison" and m.properties["RETRY_TOPIC"] == "RetryTopic" and m.keys == ["k-poison"]
        assert m.reconsume_times == 3 and m.properties.get("ORIGIN_MESSAGE_ID")


async def test_send_back_wire_rules(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path, messageDelayLevel=FAST_LEVELS, autoCreateSubscriptionGroup=False) as broker:
        resp = await send(client, broker.addr, "SB", b"x", keys="kk")
        phys = int(resp.ext_fields["msgId"][16:], 16)
        back = lambda **kw: simple_cmd(RequestCode.CONSUMER_SEND_MSG_BACK, **kw)  # noqa: E731
        r = await client.invoke(broker.addr, back(offset=phys, group="CID_none", delayLevel=0), 3.0)
        assert r.code == ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST
        broker.groups.set_auto_create(True)
        r = await client.invoke(broker.addr, back(offset=phys + 999_999, group="CID_g", delayLevel=0), 3.0)
        assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, f"look message by offset failed, {phys + 999_999}")
        # delayLevel 0 → SCHEDULE_TOPIC_XXXX level 3 (3 + reconsumeTimes 0), then %RETRY%CID_g after 1 s
        r = await client.invoke(broker.addr, back(offset=phys, group="CID_g", delayLevel=0, maxReconsumeTimes=5), 3.0)
        assert r.code == ResponseCode.SUCCESS, r.remark
        assert broker.store.get_max_offset_in_queue("SCHEDULE_TOPIC_XXXX", 2) == 1
        # delayLevel < 0 → straight to the DLQ
        r = await client.invoke(broker.addr, back(offset=phys, group="CID_g", delayLevel=-1), 3.0)
        assert r.code == ResponseCode.SUCCESS
        assert broker.store.get_max_offset_in_queue("%DLQ%CID_g", 0) == 1
        retry = "%RETRY%CID_g"
        await eventually(lambda: broker.store.get_max_offset_in_queue(retry, 0) >= 1, what="the retry message")
        r = await pull(client, broker.addr, "CID_g", retry, 0, 0, suspend_ms=0)
        [m] = messages(r)
        assert m.topic == retry and m.reconsume_times == 1 and m.properties["RETRY_TOPIC"] == "SB"
        assert m.properties["ORIGIN_MESSAGE_ID"] == resp.ext_fields["msgId"]
