"""Message traces written by the SDK (``enable_trace``): a traced send and consume leave Pub, SubBefore and SubAfter
records in the trace topic in the Java client's format, found by msgId through the index as J's
``queryMsgTraceById`` finds them; a custom trace topic; the dispatcher's bounded buffer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from client import ConsumeResult, Message, Producer, PushConsumer, ReceivedMessage
from client.admin.admin_client import AdminClient
from client.admin.cli_trace import decode_trace
from client.results import SendResult
from client.trace import TraceDispatcher
from protocol.trace import TraceRecord, TraceType, decode_records
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.client_support import Cluster


@pytest.fixture
async def traced(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, traceTopicEnable=True) as broker:
        yield Cluster(ns, broker, tmp_path)


async def _records(ns: str, trace_topic: str, msg_id: str) -> list[TraceRecord]:
    async with AdminClient(ns) as admin:
        found = await admin.query_by_key(trace_topic, msg_id)
    return [r for m in found for r in decode_records(m.body.decode()) if r.msg_id == msg_id]


async def test_send_and_consume_are_traced(traced: Cluster) -> None:
    await traced.create_topic("TopicTr", 2)
    seen: list[ReceivedMessage] = []

    async def listener(msgs: list[ReceivedMessage]) -> ConsumeResult:
        seen.extend(msgs)
        return ConsumeResult.SUCCESS

    consumer = PushConsumer("CG_tr", namesrv_addr=traced.ns_addr, consume_from_where="FIRST_OFFSET", enable_trace=True)
    consumer.subscribe("TopicTr", "*", listener)
    results: list[SendResult] = []
    async with Producer("PG_tr", namesrv_addr=traced.ns_addr, enable_trace=True) as p:
        for i in range(3):
            results.append(await p.send(Message("TopicTr", f"b{i}".encode(), tags="TagA", keys=[f"order-{i}"])))
        async with consumer:
            await eventually(lambda: len(seen) == 3, what="3 messages consumed")
    # close() flushed both dispatchers: every record is in the trace topic now
    for i, r in enumerate(results):
        records = await eventually(lambda r=r: _records(traced.ns_addr, "RMQ_SYS_TRACE_TOPIC", r.msg_id))
        by_type = {x.type: x for x in records}
        assert set(by_type) == {TraceType.PUB, TraceType.SUB_BEFORE, TraceType.SUB_AFTER}, records
        pub = by_type[TraceType.PUB]
        assert (pub.group, pub.topic, pub.tags, pub.keys) == ("PG_tr", "TopicTr", "TagA", f"order-{i}")
        assert pub.store_host == traced.broker.addr and pub.offset_msg_id == r.offset_msg_id
        assert pub.success and pub.body_length == 2 and pub.region_id == "DefaultRegion" and pub.timestamp > 0
        before, after = by_type[TraceType.SUB_BEFORE], by_type[TraceType.SUB_AFTER]
        assert before.group == after.group == "CG_tr" and before.request_id == after.request_id
        assert before.keys == f"order-{i}" and before.retry_times == 0
        assert before.region_id == "DefaultRegion"  # the MSG_REGION the broker stamped on the message
        assert after.success and after.context_code == 0
    # and the admin tool's decoder (J TraceView) sees them as J's queryMsgTraceById shows them
    async with AdminClient(traced.ns_addr) as admin:
        msgs = await admin.query_by_key("RMQ_SYS_TRACE_TOPIC", results[0].msg_id)
    views = [v for m in msgs for v in decode_trace(results[0].msg_id, m)]
    assert {(v.msg_type, v.group_name, v.status) for v in views} == {
        ("Pub", "PG_tr", "success"),
        ("SubBefore", "CG_tr", "success"),
        ("SubAfter", "CG_tr", "success"),
    }


async def test_custom_trace_topic_and_untraced_clients(traced: Cluster) -> None:
    await traced.create_topic("TopicTr2", 1)
    await traced.create_topic("MyTraces", 1)
    async with Producer("PG_tr2", namesrv_addr=traced.ns_addr, enable_trace=True, trace_topic="MyTraces") as p:
        r = await p.send(Message("TopicTr2", b"x", keys="k"))
    async with Producer("PG_plain", namesrv_addr=traced.ns_addr) as plain:
        r2 = await plain.send(Message("TopicTr2", b"y", keys="k2"))
    recs = await eventually(lambda: _records(traced.ns_addr, "MyTraces", r.msg_id))
    assert [x.type for x in recs] == [TraceType.PUB]
    assert await _records(traced.ns_addr, "RMQ_SYS_TRACE_TOPIC", r.msg_id) == []
    assert await _records(traced.ns_addr, "MyTraces", r2.msg_id) == []  # tracing is off by default


class _Sink:
    """A trace sender that keeps what it is given (the buffering is under test here, not the broker)."""

    def __init__(self) -> None:
        self.sent: list[Message] = []

    async def send(self, msg: Message, *, timeout: float | None = None) -> SendResult:
        self.sent.append(msg)
        raise RuntimeError("no broker in this test")

    async def close(self) -> None:
        pass


async def test_dispatcher_drops_and_counts_when_full() -> None:
    sink = _Sink()

    async def make() -> _Sink:
        return sink

    d = TraceDispatcher(make, "T", capacity=3, batch_size=2)
    rec = TraceRecord(TraceType.PUB, "ID", topic="A", keys="k1 k2")
    d.append([rec, rec])
    d.append([rec, rec])  # would exceed 3: refused whole, counted, never blocking
    assert d.dropped == 2
    await d.close()
    assert d.failed == 2 and d.sent == 0  # the sender failed: counted, not raised
    assert len(sink.sent) == 1 and sink.sent[0].topic == "T" and sink.sent[0].keys == "ID k1 k2"
    assert decode_records(sink.sent[0].body.decode()) == [rec, rec]


async def test_broker_with_trace_off_gets_no_records(tmp_path: Path) -> None:
    """``traceOn=false``: sends answer TRACE_ON=false (no Pub, as J) and messages carry it (no SubBefore/After)."""
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, traceTopicEnable=True, traceOn=False) as broker,
    ):
        cluster = Cluster(ns, broker, tmp_path)
        await cluster.create_topic("TopicOff", 1)
        seen: list[ReceivedMessage] = []

        async def listener(msgs: list[ReceivedMessage]) -> ConsumeResult:
            seen.extend(msgs)
            return ConsumeResult.SUCCESS

        consumer = PushConsumer("CG_off", namesrv_addr=ns.addr, consume_from_where="FIRST_OFFSET", enable_trace=True)
        consumer.subscribe("TopicOff", "*", listener)
        async with Producer("PG_off", namesrv_addr=ns.addr, enable_trace=True) as p:
            r = await p.send(Message("TopicOff", b"quiet"))
            assert r.trace_on is False
            async with consumer:
                await eventually(lambda: seen, what="the message consumed")
        assert seen[0].properties["TRACE_ON"] == "false"
        # both dispatchers were closed (flushed) above: nothing was written for this message
        assert await _records(ns.addr, "RMQ_SYS_TRACE_TOPIC", r.msg_id) == []
