"""PushConsumer against a real name server and broker: no message lost across a group of three, rebalancing on
join and leave within seconds, broadcasting, redelivery of failed messages, flow control, clean shutdown, offset
reset and running info requested through the broker."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from client import ConsumeResult, Message, MessageQueue, Producer, PushConsumer
from protocol.bodies import loads_lenient
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import (
    GetConsumerRunningInfoRequestHeader,
    GetConsumerStatusRequestHeader,
    ResetOffsetRequestHeader,
)
from protocol.message_ext import MessageExt
from protocol.remoting.client import RemotingClient
from tests.integration.client_support import Cluster, client_tasks, until


async def produce(ns_addr: str, topic: str, n: int, *, prefix: str = "", batch: int = 32) -> None:
    async with Producer("PG_push_tests", namesrv_addr=ns_addr) as p:
        for i in range(0, n, batch):
            msgs = [
                Message(topic, f"{prefix}{j}".encode(), tags="T", keys=[f"{prefix}{j}"])
                for j in range(i, min(i + batch, n))
            ]
            await p.send_batch(msgs)


def recording(seen: Counter[bytes]) -> Callable[[list[MessageExt]], ConsumeResult]:
    def listener(msgs: list[MessageExt]) -> ConsumeResult:  # a plain function: runs in a worker thread
        seen.update(m.body for m in msgs)
        return ConsumeResult.SUCCESS

    return listener


def partitioned(consumers: list[PushConsumer], topic: str, queues: int) -> bool:
    owned = [[mq for mq in c.assignment if mq.topic == topic] for c in consumers]
    flat = [mq for o in owned for mq in o]
    return all(owned) and len(flat) == len(set(flat)) == queues


async def test_ten_thousand_messages_through_three_consumers(cluster: Cluster) -> None:
    n = 10_000
    await cluster.create_topic("TopicLoad", 8)
    seen: list[Counter[bytes]] = [Counter() for _ in range(3)]
    consumers = []
    for i in range(3):
        c = PushConsumer("CG_load", namesrv_addr=cluster.ns_addr, consume_message_batch_max_size=8)
        if i == 0:  # async listener

            async def on_msgs(msgs: list[MessageExt], s: Counter[bytes] = seen[0]) -> ConsumeResult:
                s.update(m.body for m in msgs)
                return ConsumeResult.SUCCESS

            c.subscribe("TopicLoad", "*", on_msgs)
        else:
            c.subscribe("TopicLoad", "*", recording(seen[i]))
        consumers.append(c)
    async with contextlib.AsyncExitStack() as stack:
        for c in consumers:
            await stack.enter_async_context(c)
        await until(lambda: partitioned(consumers, "TopicLoad", 8), timeout=10, what="the group to share 8 queues")
        await produce(cluster.ns_addr, "TopicLoad", n)
        want = {str(i).encode() for i in range(n)}
        await until(lambda: want <= set().union(*seen), timeout=60, what=f"all {n} messages")
        total = sum(sum(s.values()) for s in seen)
        assert all(sum(s.values()) > 0 for s in seen), "every consumer got a share"
        assert total == n, f"{total - n} duplicates with a stable group"
    # close persisted every offset: the group's committed offsets cover the whole topic
    committed = sum(cluster.broker.offsets.query("CG_load", "TopicLoad", q) for q in range(8))
    assert committed == n


async def test_join_and_leave_rebalance_within_seconds(cluster: Cluster) -> None:
    await cluster.create_topic("TopicJoin", 6)
    seen: Counter[bytes] = Counter()
    first = PushConsumer("CG_join", namesrv_addr=cluster.ns_addr)  # rebalance interval is 20 s
    first.subscribe("TopicJoin", "*", recording(seen))
    async with first:
        assert len([q for q in first.assignment if q.topic == "TopicJoin"]) == 6
        second = PushConsumer("CG_join", namesrv_addr=cluster.ns_addr)
        second.subscribe("TopicJoin", "*", recording(seen))
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        async with second:
            await until(lambda: partitioned([first, second], "TopicJoin", 6), timeout=5, what="rebalance on join")
            assert loop.time() - t0 < 5
        t1 = loop.time()
        await until(lambda: partitioned([first], "TopicJoin", 6), timeout=5, what="rebalance on leave")
        assert loop.time() - t1 < 5


async def test_broadcasting_delivers_everything_to_everyone(cluster: Cluster) -> None:
    await cluster.create_topic("TopicBcast", 4)
    n = 300
    seen = [Counter[bytes](), Counter[bytes]()]
    consumers = []
    for i in range(2):
        c = PushConsumer(
            "CG_bcast",
            namesrv_addr=cluster.ns_addr,
            message_model="BROADCASTING",
            offset_store_dir=str(cluster.tmp_path / f"offsets{i}"),
        )
        c.subscribe("TopicBcast", "*", recording(seen[i]))
        consumers.append(c)
    async with contextlib.AsyncExitStack() as stack:
        for c in consumers:
            await stack.enter_async_context(c)
            assert len(c.assignment) == 4  # every queue, no retry topic
        await produce(cluster.ns_addr, "TopicBcast", n)
        want = {str(i).encode() for i in range(n)}
        await until(lambda: all(want <= set(s) for s in seen), timeout=30, what="both consumers to see everything")
    # offsets in the local files, one per consumer
    for i, c in enumerate(consumers):
        data = json.loads(
            (cluster.tmp_path / f"offsets{i}").joinpath(c.instance.client_id, "CG_bcast", "offsets.json").read_text()
        )
        assert sum(v for k, v in data["offsetTable"].items() if k.startswith("TopicBcast@")) == n


async def test_failed_messages_come_back(cluster: Cluster) -> None:
    await cluster.create_topic("TopicRetry", 2)
    attempts: dict[str, list[MessageExt]] = {}

    async def flaky(msgs: list[MessageExt]) -> ConsumeResult:
        m = msgs[0]
        key = m.keys[0]
        attempts.setdefault(key, []).append(m)
        if len(attempts[key]) == 1:
            if key.endswith("1"):
                raise RuntimeError("listener bug")  # an exception counts as RECONSUME_LATER
            return ConsumeResult.RECONSUME_LATER
        return ConsumeResult.SUCCESS

    c = PushConsumer("CG_retry", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicRetry", "*", flaky)
    async with c:
        await produce(cluster.ns_addr, "TopicRetry", 10, prefix="r")
        await until(
            lambda: len(attempts) == 10 and all(len(a) >= 2 for a in attempts.values()),
            timeout=30,
            what="every message a second time",
        )
        assert c.stats["sent_back"] == 10
    for key, tries in attempts.items():
        first, again = tries[0], tries[1]
        assert again.topic == "TopicRetry"  # restored from RETRY_TOPIC
        assert again.body == first.body and again.keys == [key] and again.tags == "T"
        assert again.reconsume_times == 1 and first.reconsume_times == 0
        assert again.msg_id == first.msg_id  # the UNIQ_KEY survives the retry topic


async def test_flow_control_pauses_then_resumes(cluster: Cluster) -> None:
    await cluster.create_topic("TopicFlow", 1)
    mq = MessageQueue("TopicFlow", "broker-a", 0)
    release = asyncio.Event()
    done: list[bytes] = []

    async def slow(msgs: list[MessageExt]) -> ConsumeResult:
        await release.wait()
        done.extend(m.body for m in msgs)
        return ConsumeResult.SUCCESS

    c = PushConsumer(
        "CG_flow",
        namesrv_addr=cluster.ns_addr,
        pull_threshold_for_queue=50,
        pull_batch_size=10,
        consume_message_batch_max_size=5,
    )
    c.subscribe("TopicFlow", "*", slow)
    async with c:
        await produce(cluster.ns_addr, "TopicFlow", 400)
        await until(lambda: mq in c.paused_queues(), timeout=10, what="the queue to pause")
        pq = c.process_queue(mq)
        assert pq is not None and 50 <= len(pq) < 60  # stopped at the threshold (one batch of overshoot at most)
        assert c.stats["pulled"] == len(pq)
        release.set()
        await until(lambda: len(done) == 400, timeout=30, what="consumption after resuming")
        assert c.stats["flow_control_times"] > 0


async def test_close_is_clean(cluster: Cluster) -> None:
    await cluster.create_topic("TopicClose", 2)
    assert client_tasks() == set()
    seen: Counter[bytes] = Counter()
    c = PushConsumer("CG_close", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicClose", "*", recording(seen))
    async with c:
        await produce(cluster.ns_addr, "TopicClose", 50)
        await until(lambda: len(seen) == 50, what="50 messages")
        assert cluster.broker.clients.client_ids("CG_close") == [c.instance.client_id]
    assert client_tasks() == set()  # no task of the consumer left behind
    assert cluster.broker.clients.client_ids("CG_close") == []  # UNREGISTER_CLIENT
    assert sum(cluster.broker.offsets.query("CG_close", "TopicClose", q) for q in range(2)) == 50


async def test_reset_offset_and_running_info_through_the_broker(cluster: Cluster) -> None:
    await cluster.create_topic("TopicReset", 1)
    seen: list[bytes] = []

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.extend(m.body for m in msgs)
        return ConsumeResult.SUCCESS

    c = PushConsumer("CG_reset", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicReset", "*", listener)
    admin = RemotingClient()
    try:
        async with c:
            await produce(cluster.ns_addr, "TopicReset", 20, prefix="m")
            await until(lambda: len(seen) == 20, what="20 messages")
            await c.persist_offsets()
            # an operator resets the group to the start (timestamp 0) through the broker
            h = ResetOffsetRequestHeader("TopicReset", "CG_reset", 0, True)
            cmd = RemotingCommand.request(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, h.to_ext_fields())
            resp = await admin.invoke(cluster.broker.addr, cmd, 5)
            assert resp.code == ResponseCode.SUCCESS, resp.remark
            await until(lambda: len(seen) == 40, what="the 20 messages again after the reset")
            assert seen[20:] == seen[:20]
            ri = GetConsumerRunningInfoRequestHeader("CG_reset", c.instance.client_id)
            cmd = RemotingCommand.request(RequestCode.GET_CONSUMER_RUNNING_INFO, ri.to_ext_fields())
            resp = await admin.invoke(cluster.broker.addr, cmd, 5)
            assert resp.code == ResponseCode.SUCCESS, resp.remark
            # J's ConsumerRunningInfo shape: MessageQueue object keys (not valid JSON), per-topic ConsumeStatus
            assert resp.body.startswith(b'{"mqTable":{{"brokerName":"broker-a","queueId":0,"topic":')
            info = loads_lenient(resp.body, object_key=MessageQueue.from_json)
            assert {s["topic"] for s in info["subscriptionSet"]} == {"TopicReset", "%RETRY%CG_reset"}
            pqi = info["mqTable"][MessageQueue("TopicReset", "broker-a", 0)]
            assert pqi["commitOffset"] == 20 and pqi["droped"] is False and pqi["lastPullTimestamp"] > 0
            assert pqi["lastConsumeTimestamp"] >= pqi["lastPullTimestamp"] - 60_000
            status = info["statusTable"]["TopicReset"]
            assert sorted(status) == [
                "consumeFailedMsgs",
                "consumeFailedTPS",
                "consumeOKTPS",
                "consumeRT",
                "pullRT",
                "pullTPS",
            ]
            assert status["consumeOKTPS"] > 0 and status["consumeFailedMsgs"] == 0 and status["pullTPS"] > 0
            assert info["properties"]["PROP_CONSUME_TYPE"] == "CONSUME_PASSIVELY" and "jstack" not in info
            ri = GetConsumerRunningInfoRequestHeader("CG_reset", c.instance.client_id, True)
            cmd = RemotingCommand.request(RequestCode.GET_CONSUMER_RUNNING_INFO, ri.to_ext_fields())
            resp = await admin.invoke(cluster.broker.addr, cmd, 5)
            assert "MainThread" in loads_lenient(resp.body, object_key=MessageQueue.from_json)["jstack"]
            # consumer status: the broker asks the client for its offsets (GET_CONSUMER_STATUS_FROM_CLIENT)
            await c.persist_offsets()
            st = GetConsumerStatusRequestHeader("TopicReset", "CG_reset")
            cmd = RemotingCommand.request(RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, st.to_ext_fields())
            resp = await admin.invoke(cluster.broker.addr, cmd, 5)
            assert resp.code == ResponseCode.SUCCESS, resp.remark
            text = resp.body.decode()
            assert c.instance.client_id in text
            assert '{"brokerName":"broker-a","queueId":0,"topic":"TopicReset"}:20' in text
    finally:
        await admin.close()


async def test_subscribe_and_unsubscribe_while_running(cluster: Cluster) -> None:
    await cluster.create_topic("TopicSubA", 1)
    await cluster.create_topic("TopicSubB", 1)
    seen: Counter[bytes] = Counter()
    c = PushConsumer("CG_dyn", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicSubA", "*", recording(seen))
    async with c:
        c.subscribe("TopicSubB", "*", recording(seen))  # heartbeat + rebalance at once, not in 20 s
        await until(lambda: any(q.topic == "TopicSubB" for q in c.assignment), timeout=5, what="TopicSubB's queue")
        await produce(cluster.ns_addr, "TopicSubB", 5, prefix="b")
        await until(lambda: len(seen) == 5, what="TopicSubB's messages")
        c.unsubscribe("TopicSubA")
        await until(lambda: all(q.topic != "TopicSubA" for q in c.assignment), timeout=5, what="TopicSubA revoked")


async def test_a_short_batch_goes_to_the_listener_before_the_next_pull_a_full_one_after(cluster: Cluster) -> None:
    """A full batch (a backlog) writes the next pull first, so the broker reads while the listener runs; a short
    batch means the queue is drained and the next pull would only be held, so its listener runs first and a lone
    message's latency does not include building and writing that pull. The order is observed as the number of
    pulls issued when the listener is called."""
    await cluster.create_topic("TopicOrder", 1)
    await produce(cluster.ns_addr, "TopicOrder", 40)
    c = PushConsumer(
        "CG_order",
        namesrv_addr=cluster.ns_addr,
        consume_from_where="FIRST_OFFSET",
        consume_message_batch_max_size=32,
        pull_batch_size=32,
        suspend_timeout_ms=3_600_000,
        pull_timeout_ms=3_700_000,
    )
    api = c.instance.api
    pull = api.pull
    pulls = 0
    found_by: list[int] = []  # the number of each pull that came back with messages, in order

    async def counted_pull(*args: Any, **kwargs: Any) -> Any:
        nonlocal pulls
        pulls += 1
        n = pulls
        res = await pull(*args, **kwargs)
        if res[2]:
            found_by.append(n)
        return res

    api.pull = counted_pull  # type: ignore[method-assign]
    seen: list[tuple[int, int]] = []  # (batch size, pulls issued when its listener ran)

    async def on_msgs(msgs: list[MessageExt]) -> ConsumeResult:
        seen.append((len(msgs), pulls))
        return ConsumeResult.SUCCESS

    c.subscribe("TopicOrder", "*", on_msgs)
    async with c:
        await until(lambda: sum(n for n, _ in seen) == 40, timeout=20, what="the 40 messages")
    assert [n for n, _ in seen] == [32, 8]
    full, short = found_by
    assert seen[0][1] == full + 1  # the full batch's listener ran after the next pull was written
    assert seen[1][1] == short  # the short batch's listener ran before it


async def test_a_lone_message_reaches_the_listener_on_arrival_not_a_poll_or_a_full_batch(cluster: Cluster) -> None:
    """Pulls are held for an hour and batches hold 32, so the only way each message can reach the listener within
    the test is the broker answering the held pull on the message's dispatch, the consumer handing the lone message
    over at once, and the consumer's next pull being issued (and held) at once after each answer."""
    await cluster.create_topic("TopicLone", 1)
    got: list[bytes] = []
    arrived = asyncio.Event()

    async def on_msgs(msgs: list[MessageExt]) -> ConsumeResult:
        got.extend(m.body for m in msgs)
        arrived.set()
        return ConsumeResult.SUCCESS

    c = PushConsumer(
        "CG_lone",
        namesrv_addr=cluster.ns_addr,
        consume_message_batch_max_size=32,
        pull_batch_size=32,
        suspend_timeout_ms=3_600_000,
        pull_timeout_ms=3_700_000,
    )
    c.subscribe("TopicLone", "*", on_msgs)
    polling = cluster.broker.polling
    async with c, Producer("PG_lone", namesrv_addr=cluster.ns_addr) as p:
        await until(lambda: polling.held_on("TopicLone", 0) == 1, timeout=10, what="the consumer's pull to be held")
        for body in (b"one", b"two"):
            arrived.clear()
            await p.send(Message("TopicLone", body))
            async with asyncio.timeout(20):
                await arrived.wait()
            assert got[-1] == body
            # the next pull went out at once and is held again, waiting for the next message
            await until(lambda: polling.held_on("TopicLone", 0) == 1, timeout=10, what="the next pull to be held")
    assert got == [b"one", b"two"]
