"""The official Go client (rocketmq-client-go/v2, the version in tests/reference/godriver/go.mod) against Apache
RocketMQ 5.5.0 and rocketq: sync, async, oneway and batch sends, then a push consumer, and a tag filter. (A
RECONSUME_LATER redelivery is not among them: the Go client learns the group's retry topic's route on its 30 s route
poll, on both clusters, so it would add half a minute.)"""

from __future__ import annotations

from typing import Any

import pytest

from tests.reference.compare import assert_same, messages, sent_view, stamped
from tests.reference.conftest import Target
from tests.reference.peers import Driver
from tests.reference.test_java4_client import create, ok, on_both

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]


def test_send_modes_then_push(java4: Driver, godriver: Driver, targets: dict[str, Target]) -> None:
    def run(t: Target) -> Any:
        create(java4, t, "RefGoSend")
        sent = []
        for mode in ("sync", "async", "oneway"):
            sent += ok(
                godriver.run(
                    cmd="send", ns=t.ns_addr, topic="RefGoSend", group="RefGoP", mode=mode, prefix=mode, count=3
                )
            )
        got = ok(godriver.run(cmd="consume", ns=t.ns_addr, topic="RefGoSend", group="RefGoC", expect=9))
        return {"sent": sent_view(sent), "got": messages(got, t.name), "stamped": stamped(got, t.name)}

    seen = on_both(targets, run)
    assert len(seen["apache"]["got"]) == 9 and len(seen["apache"]["sent"]) == 6
    assert seen["apache"].pop("stamped") == set()
    assert seen["rocketq"].pop("stamped") == {"__CRC32#"}
    assert_same(seen)


def test_batch_send_then_push(java4: Driver, godriver: Driver, targets: dict[str, Target]) -> None:
    """5 messages in one SendSync call (a batch: one send result, whose message id the Go client leaves empty on
    both, and one queue), then a push consumer."""

    def run(t: Target) -> Any:
        create(java4, t, "RefGoBatch")
        sent = ok(godriver.run(cmd="send", ns=t.ns_addr, topic="RefGoBatch", group="RefGoP", mode="batch", count=5))
        got = ok(godriver.run(cmd="consume", ns=t.ns_addr, topic="RefGoBatch", group="RefGoBatchC", expect=5))
        queues = {e["queueId"] for e in got if e["event"] == "msg"}
        return {"sent": sent_view(sent), "queues": len(queues), "got": messages(got, t.name)}

    seen = on_both(targets, run)
    assert [r[0] for r in seen["apache"]["sent"]] == ["SEND_OK"] and seen["apache"]["queues"] == 1
    assert len(seen["apache"]["got"]) == 5
    assert_same(seen)


def test_tag_filter(java4: Driver, godriver: Driver, targets: dict[str, Target]) -> None:
    """A push consumer subscribed to TagB only."""

    def run(t: Target) -> Any:
        create(java4, t, "RefGoRetry")
        ok(godriver.run(cmd="send", ns=t.ns_addr, topic="RefGoRetry", group="RefGoP", count=6, prefix="gr"))
        got = godriver.run(cmd="consume", ns=t.ns_addr, topic="RefGoRetry", group="RefGoRetryC", expr="TagB", expect=2)
        return messages(ok(got), t.name)

    seen = on_both(targets, run)
    assert [(m[2], m[4]) for m in seen["apache"]] == [("gr-key-1", 0), ("gr-key-4", 0)]
    assert_same(seen)


def test_rebalance_three_consumers_then_one_leaves(java4: Driver, godriver: Driver, targets: dict[str, Target]) -> None:
    """As the Java 4.x scenario: 3 Go push consumers share 4 queues (2/1/1, their AllocateByAveragely results),
    consume 8; one leaves, the other two take its queue over (2/2) and consume 8 more; nothing lost or twice."""

    def run(t: Target) -> Any:
        create(java4, t, "RefGoRebalance")
        got = godriver.run(
            cmd="rebalance", ns=t.ns_addr, topic="RefGoRebalance", group="RefGoRebC", consumers=3, count=8
        )
        return [e for e in ok(got) if e["event"] != "sent"]

    seen = on_both(targets, run)
    assert seen["apache"] == [
        {"event": "alloc", "phase": "joined", "queues": [2, 1, 1]},
        {"event": "alloc", "phase": "left", "queues": [2, 2]},
        {"event": "received", "distinct": 16, "duplicated": 0},
    ]
    assert_same(seen)
