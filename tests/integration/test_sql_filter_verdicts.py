"""SQL92 pulls served from the filter verdicts the store keeps per consume-queue entry (``broker/store/filter_marks.py``)
deliver exactly what evaluating every record would: for messages sent before the subscription existed and after it
(judged at dispatch), across pull sizes that mix known and unknown verdicts, when the expression changes, across a
restart, on a ``%RETRY%`` topic, and after a topic is deleted and re-created (its queue offsets reused)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from client import ConsumeResult, Message, MessageSelector, Producer, PushConsumer
from protocol.codes import RequestCode, ResponseCode
from protocol.message_ext import MessageExt
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import messages, pull_cmd, send, simple_cmd

TOPIC = "TopicVerdicts"
FAST_LEVELS = " ".join(["1s"] * 18)


def _props(i: int) -> dict[str, str]:
    return {"a": str(i), "b": "x" if i % 3 == 0 else "y"}


def _expected(expr_test: range | set[int], sent: list[int]) -> list[bytes]:
    return [f"m{i}".encode() for i in sent if i in expr_test]


async def _send_range(client: RemotingClient, addr: str, topic: str, values: range) -> None:
    for i in values:
        tags = "TagA" if i % 2 == 0 else "TagB"
        r = await send(client, addr, topic, f"m{i}".encode(), tags=tags, props=_props(i), queue_nums=1)
        assert r.code == ResponseCode.SUCCESS, r.remark


async def _read_all(
    client: RemotingClient, addr: str, topic: str, expr: str, *, max_msgs: int = 32, group: str = "CG_verdicts"
) -> list[bytes]:
    """Every message of queue 0 the expression keeps, pulled from offset 0 to the end."""
    out: list[bytes] = []
    off = 0
    while True:
        cmd = pull_cmd(group, topic, 0, off, sub=expr, suspend_ms=0, max_msgs=max_msgs)
        cmd.ext_fields["expressionType"] = "SQL92"
        r = await client.invoke(addr, cmd, 5.0)
        if r.code == ResponseCode.PULL_NOT_FOUND:
            return out
        assert r.code in (ResponseCode.SUCCESS, ResponseCode.PULL_RETRY_IMMEDIATELY), (r.code, r.remark)
        if r.code == ResponseCode.SUCCESS:
            out.extend(m.body for m in messages(r))
        nxt = int(r.ext_fields["nextBeginOffset"])
        assert nxt > off
        off = nxt


async def test_messages_before_and_after_the_subscription(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path, enablePropertyFilter=True) as broker:
        assert broker.store is not None
        addr, marks = broker.addr, broker.store.dispatcher.marks
        broker.topics.create_if_absent(TOPIC, 1, 6)
        await _send_range(client, addr, TOPIC, range(40))  # before anyone subscribed: nothing judged at dispatch
        assert marks.stats() == {"filterKeys": 0, "filterVerdicts": 0}
        expr = "a >= 30 OR b = 'x'"
        wanted = {i for i in range(200) if i >= 30 or i % 3 == 0}
        assert await _read_all(client, addr, TOPIC, expr) == _expected(wanted, list(range(40)))
        assert marks.stats()["filterKeys"] == 1  # the first read registered it and kept its verdicts
        await _send_range(client, addr, TOPIC, range(40, 100))  # judged at dispatch, before any read
        assert marks.stats()["filterVerdicts"] >= 100
        everything = list(range(100))
        for max_msgs in (32, 7, 1):  # known matches, known misses and the all-match fast path in one scan
            assert await _read_all(client, addr, TOPIC, expr, max_msgs=max_msgs) == _expected(wanted, everything)
        # a second selector on the same topic keeps its own verdicts; one that needs a tag is pre-filtered too
        tagged = "TAGS = 'TagA' AND a < 50"
        want_tagged = {i for i in range(50) if i % 2 == 0}
        assert await _read_all(client, addr, TOPIC, tagged) == _expected(want_tagged, everything)
        await _send_range(client, addr, TOPIC, range(100, 120))
        assert await _read_all(client, addr, TOPIC, tagged, max_msgs=5) == _expected(want_tagged, list(range(120)))
        assert await _read_all(client, addr, TOPIC, "a < 0") == []
        assert await _read_all(client, addr, TOPIC, expr) == _expected(wanted, list(range(120)))


async def test_a_changed_expression_gets_its_own_matches(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path, enablePropertyFilter=True) as broker:
        broker.topics.create_if_absent(TOPIC, 1, 6)
        await _send_range(client, broker.addr, TOPIC, range(30))
        sent = list(range(30))
        assert await _read_all(client, broker.addr, TOPIC, "a < 10") == _expected(set(range(10)), sent)
        # the same group now subscribes with another expression: the first one's verdicts do not leak into it
        assert await _read_all(client, broker.addr, TOPIC, "a >= 10") == _expected(set(range(10, 30)), sent)
        await _send_range(client, broker.addr, TOPIC, range(30, 40))
        sent = list(range(40))
        assert await _read_all(client, broker.addr, TOPIC, "a < 10", max_msgs=4) == _expected(set(range(10)), sent)
        assert await _read_all(client, broker.addr, TOPIC, "a >= 10") == _expected(set(range(10, 40)), sent)


async def test_a_restart_forgets_the_verdicts_and_reads_stay_exact(tmp_path: Path, client: RemotingClient) -> None:
    expr = "b = 'x' AND a BETWEEN 5 AND 50"
    wanted = {i for i in range(5, 51) if i % 3 == 0}
    async with run_broker(None, tmp_path, enablePropertyFilter=True) as broker:
        broker.topics.create_if_absent(TOPIC, 1, 6)
        await _send_range(client, broker.addr, TOPIC, range(30))
        assert await _read_all(client, broker.addr, TOPIC, expr) == _expected(wanted, list(range(30)))
    async with run_broker(None, tmp_path, enablePropertyFilter=True) as broker:
        assert broker.store is not None and broker.store.dispatcher.marks.stats()["filterVerdicts"] == 0
        await _send_range(client, broker.addr, TOPIC, range(30, 60))
        assert await _read_all(client, broker.addr, TOPIC, expr, max_msgs=4) == _expected(wanted, list(range(60)))
        await _send_range(client, broker.addr, TOPIC, range(60, 70))
        assert await _read_all(client, broker.addr, TOPIC, expr) == _expected(wanted, list(range(70)))


async def test_a_recreated_topic_does_not_reuse_old_verdicts(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path, enablePropertyFilter=True) as broker:
        broker.topics.create_if_absent(TOPIC, 1, 6)
        await _send_range(client, broker.addr, TOPIC, range(10))
        assert await _read_all(client, broker.addr, TOPIC, "a >= 5") == _expected(set(range(5, 10)), list(range(10)))
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic=TOPIC), 5.0)
        assert r.code == ResponseCode.SUCCESS, r.remark
        broker.topics.create_if_absent(TOPIC, 1, 6)
        # queue offsets 0..9 again, every message matching now (offsets 0..4 were misses before)
        await _send_range(client, broker.addr, TOPIC, range(100, 110))
        assert await _read_all(client, broker.addr, TOPIC, "a >= 5") == _expected(
            set(range(100, 110)), list(range(100, 110))
        )


async def test_retry_topic_with_a_sql_consumer(tmp_path: Path, client: RemotingClient) -> None:
    """A SQL92 push consumer's failed matches come back from %RETRY%<group>; the retry topic read with the
    expression keeps its own verdicts and delivers exactly the matching retries."""
    group = "CG_sql_retry"
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, enablePropertyFilter=True, messageDelayLevel=FAST_LEVELS) as broker,
    ):
        seen: list[tuple[str, int]] = []
        done = asyncio.Event()

        def listener(msgs: list[MessageExt]) -> ConsumeResult:
            for m in msgs:
                seen.append((m.properties["a"], m.reconsume_times))
            if len(seen) >= 7:  # a = 5..9 once, 6 and 8 twice
                done.set()
            failed = any(m.reconsume_times == 0 and m.properties["a"] in ("6", "8") for m in msgs)
            return ConsumeResult.RECONSUME_LATER if failed else ConsumeResult.SUCCESS

        consumer = PushConsumer(
            group, namesrv_addr=ns.addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET", rebalance_interval=0.5
        )
        consumer.subscribe("TopicRetrySql", MessageSelector.by_sql("a >= 5"), listener)
        async with Producer("PG_sql_retry", namesrv_addr=ns.addr) as producer:
            for i in range(10):
                await producer.send(Message("TopicRetrySql", f"m{i}".encode(), properties=_props(i)))
        async with consumer:
            await asyncio.wait_for(done.wait(), 30)
        assert sorted(seen) == sorted([(str(i), 0) for i in range(5, 10)] + [("6", 1), ("8", 1)])
        retry = f"%RETRY%{group}"
        store = broker.store
        assert store is not None
        await eventually(lambda: store.get_max_offset_in_queue(retry, 0) >= 2, what="the two retries")
        got = await _read_all(client, broker.addr, retry, "a = 8", group=group)
        assert got == [b"m8"]
        assert await _read_all(client, broker.addr, retry, "a = 8", group=group, max_msgs=1) == [b"m8"]
