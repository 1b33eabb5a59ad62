"""SEARCH_OFFSET_BY_TIMESTAMP on Apache RocketMQ 5.5.0 and on rocketq: the same messages (single sends and a batch,
whose messages share one store time) in one queue, then the offset each broker answers for times at, between,
before and after the stored times, with ``boundaryType`` absent, ``LOWER``, ``UPPER`` (any case) or unknown, on
that queue, an empty queue and a topic that does not exist. Times are taken from each broker's own store times, so
the questions have the same shape on both and the answers must be equal."""

from __future__ import annotations

import asyncio
import time

import pytest

from client import Message, Producer, PullConsumer
from client.admin.admin_client import AdminClient
from protocol.bodies.mq import MessageQueue
from protocol.codes import RequestCode, ResponseCode
from tests.reference.compare import assert_same
from tests.reference.conftest import Target
from tests.reference.peers import wait_route

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]

TOPIC = "RefByTime"
PLAN = (1, 1, 3, 1, 1)  # messages per send; 3 = one batch
BOUNDARIES = (None, "LOWER", "UPPER", "upper", "Bogus")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


async def store_times(t: Target) -> list[int]:
    """Send PLAN to queue 0 of TOPIC, each send at least 3 ms after the previous one was answered (distinct store
    times, never 1 ms apart); the store times of the queue's messages in offset order."""
    async with AdminClient(t.ns_addr) as admin:
        await admin.create_topic(t.broker_addr, TOPIC, 2, 2, 6, False)
    await asyncio.to_thread(wait_route, t.ns_addr, TOPIC)
    q = MessageQueue(TOPIC, "broker-a", 0)
    async with Producer("RefByTimeP", namesrv_addr=t.ns_addr) as p:
        for i, n in enumerate(PLAN):
            if n == 1:
                await p.send(Message(TOPIC, b"single-%d" % i), queue=q)
            else:
                await p.send_batch([Message(TOPIC, b"batch-%d-%d" % (i, k)) for k in range(n)], queue=q)
            answered = now_ms()
            while now_ms() <= answered + 2:  # clock ticks between sends, not synchronisation
                await asyncio.sleep(0.001)
    async with PullConsumer("RefByTimeC", namesrv_addr=t.ns_addr) as pc:
        r = await pc.pull(q, 0, 32)
    return [m.store_timestamp for m in r.msg_found_list]


async def answers(t: Target) -> dict[str, object]:
    times = await store_times(t)
    distinct = sorted(set(times))
    assert len(times) == sum(PLAN) and len(distinct) == len(PLAN), times  # the batch shares one store time
    points = {"before": distinct[0] - 1000, "after": distinct[-1] + 1000}
    for i, ts in enumerate(distinct):
        points.update({f"at{i}": ts, f"at{i}-1": ts - 1, f"at{i}+1": ts + 1})
    out: dict[str, object] = {}
    async with AdminClient(t.ns_addr) as admin:
        for boundary in BOUNDARIES:
            for label, ts in points.items():
                for topic, qid in ((TOPIC, 0), (TOPIC, 1), ("RefByTimeNoSuchTopic", 0)):
                    ext = {"topic": topic, "queueId": str(qid), "timestamp": str(ts)}
                    if boundary is not None:
                        ext["boundaryType"] = boundary
                    resp = await admin.call(
                        t.broker_addr, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, ext, ok=tuple(ResponseCode)
                    )
                    got = int(resp.ext_fields["offset"]) if resp.code == ResponseCode.SUCCESS else resp.remark
                    out[f"{boundary} {label} {topic}:{qid}"] = got
    return out


async def test_search_offset_by_timestamp(targets: dict[str, Target]) -> None:
    seen = {name: await answers(t) for name, t in targets.items()}
    apache = seen["apache"]
    # what Apache RocketMQ 5.5.0 answers (offsets 0,1 single; 2-4 the batch; 5,6 single)
    assert [apache[f"None at{i} {TOPIC}:0"] for i in range(5)] == [0, 1, 2, 5, 6]  # LOWER: first at the time
    assert [apache[f"UPPER at{i} {TOPIC}:0"] for i in range(5)] == [0, 1, 4, 5, 6]  # UPPER: last at the time
    assert [apache[f"LOWER at{i}+1 {TOPIC}:0"] for i in range(5)] == [1, 2, 5, 6, 7]  # the next; max offset after
    assert [apache[f"upper at{i}-1 {TOPIC}:0"] for i in range(5)] == [0, 0, 1, 4, 5]  # the previous; 0 before
    assert (apache[f"None after {TOPIC}:0"], apache[f"UPPER after {TOPIC}:0"]) == (7, 6)
    assert {apache[f"{b} after {TOPIC}:1"] for b in BOUNDARIES} == {0}  # an empty queue
    assert_same(seen)
