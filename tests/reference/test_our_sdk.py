"""rocketq's own asyncio SDK (``client``) against Apache RocketMQ 5.5.0 and against rocketq: sync sends, then a push
consumer from the first offset, compared like the official clients' scenarios: with ``serialize_type="JSON"`` and
with default options (msgpack is only used once a rocketq server has offered it on the connection, so against Apache
RocketMQ the default is JSON); and the SDK's message traces, read back in the Java client's format."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client import Message, Producer
from protocol.message_ext import MessageExt
from tests.compat.sdk_support import consume_ours
from tests.reference.compare import assert_same, messages
from tests.reference.conftest import Target
from tests.reference.peers import Driver
from tests.reference.test_java4_client import create
from tests.reference.test_java_timers_replies import trace_records

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]

N = 6
TAGS = ("TagA", "TagB", "TagC")


def event(m: MessageExt) -> dict[str, Any]:
    """Our message as the drivers report one (tests/reference/compare.py reads these)."""
    return {
        "event": "msg",
        "topic": m.topic,
        "tags": m.tags,
        "keys": " ".join(m.keys),
        "body": m.body.decode(),
        "reconsumeTimes": m.reconsume_times,
        "props": dict(m.properties),
    }


async def round_trip(t: Target, topic: str, group: str, **options: Any) -> dict[str, Any]:
    async with Producer("RefSdkP", namesrv_addr=t.ns_addr, **options) as p:
        statuses = []
        for i in range(N):
            msg = Message(
                topic, f"sdk-body-{i}".encode(), tags=TAGS[i % 3], keys=[f"sdk-key-{i}"], properties={"seq": str(i)}
            )
            statuses.append((await asyncio.wait_for(p.send(msg), 30)).send_status.name)
    got = await consume_ours(t.ns_addr, topic, N, group, **options)
    return {"sent": statuses, "got": messages([event(m) for m in got.values()], t.name)}


async def test_sdk_with_json_headers(java4: Driver, targets: dict[str, Target]) -> None:
    seen = {}
    for name, t in targets.items():
        create(java4, t, "RefSdkJson")
        seen[name] = await round_trip(t, "RefSdkJson", "RefSdkJsonC", serialize_type="JSON")
    assert seen["apache"]["sent"] == ["SEND_OK"] * N
    assert_same(seen)


async def test_sdk_with_default_options(java4: Driver, targets: dict[str, Target]) -> None:
    seen = {}
    for name, t in targets.items():
        create(java4, t, "RefSdkDefault")
        seen[name] = await round_trip(t, "RefSdkDefault", "RefSdkDefaultC")
    assert seen["apache"]["sent"] == ["SEND_OK"] * N
    assert_same(seen)


async def test_sdk_traces_read_as_java_writes_them(java4: Driver, targets: dict[str, Target]) -> None:
    """Our SDK with ``enable_trace`` (producer and push consumer) and a custom trace topic: the records it writes are
    read back by the Java 4.x client and parse in the Java client's format (Pub, SubBefore, SubAfter with the same
    fields), the same on both clusters."""
    seen = {}
    for name, t in targets.items():
        create(java4, t, "RefSdkTraced")
        create(java4, t, "RefSdkTraceTopic")
        await round_trip(t, "RefSdkTraced", "RefSdkTracedC", enable_trace=True, trace_topic="RefSdkTraceTopic")
        got = java4.run(
            cmd="consume", ns=t.ns_addr, topic="RefSdkTraceTopic", group="RefSdkTraceReader", expect=1, settleMs=5000
        )
        seen[name] = trace_records(got)
    kinds = [r[0] for r in seen["apache"]]
    assert kinds.count("Pub") == N and kinds.count("SubBefore") == N and kinds.count("SubAfter") == N, seen
    assert {r[2] for r in seen["apache"] if r[0] == "Pub"} == {"RefSdkTraced"}
    assert_same(seen)
