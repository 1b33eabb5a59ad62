"""The Java 5.x gRPC client (rocketmq-client-java 5.0.8, the client RocketMQ 5 recommends) against Apache
RocketMQ 5.5.0's proxy (cluster mode) and against rocketq's gRPC endpoint (``--enable-proxy``): the same commands on
both through one driver JVM, compared. Topics and groups are made with the Java 4.x admin (the driver's
``create_topic`` / ``create_group``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.reference.compare import VOLATILE, assert_same, errors
from tests.reference.conftest import Target, clusters, need
from tests.reference.peers import Driver, mqadmin, wait_route
from tests.reference.test_java4_client import create, on_both

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]


def create_typed(t: Target, work: Path, topic: str, message_type: str) -> None:
    """A topic that accepts one RocketMQ 5 message type (``+message.type``, which the 5.x proxy checks), made with
    Apache RocketMQ 5.5.0's mqadmin on either cluster."""
    out = mqadmin(
        t.ns_addr, work, "updateTopic", "-c", "RefCluster", "-t", topic, "-a", f"+message.type={message_type}"
    )
    assert out.returncode == 0, out.stdout + out.stderr
    wait_route(t.ns_addr, topic)


def view(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted(
        (
            e["topic"],
            e["tags"],
            e["keys"],
            e["body"],
            e["deliveryAttempt"],
            e.get("messageGroup"),
            e["hasDeliveryTimestamp"],
            tuple(sorted((k, "*" if k in VOLATILE else v) for k, v in e["props"].items())),
        )
        for e in events
        if e["event"] == "msg"
    )


def ok(events: list[dict[str, Any]], where: str = "") -> list[dict[str, Any]]:
    """``events`` when the client reported no error and no timeout; ``where`` (the cluster) names the failing side."""
    got = [(e["keys"], e["deliveryAttempt"]) for e in events if e["event"] == "msg"]
    assert not errors(events), f"{where}: {errors(events)}; received {got}"
    return events


def test_push_consumer_started_before_sends(java4: Driver, java5: Driver, targets: dict[str, Target]) -> None:
    def run(t: Target) -> Any:
        create(java4, t, "Ref5Push")
        return view(ok(java5.run(cmd="push", endpoint=t.grpc_endpoint, topic="Ref5Push", group="Ref5PushC", count=6)))

    seen = on_both(targets, run)
    assert len(seen["apache"]) == 6
    assert_same(seen)


def test_simple_consumer_created_after_sends(java4: Driver, java5: Driver, targets: dict[str, Target]) -> None:
    def run(t: Target) -> Any:
        create(java4, t, "Ref5Simple")
        ok(java5.run(cmd="send", endpoint=t.grpc_endpoint, topic="Ref5Simple", count=5))
        got = java5.run(cmd="simple", endpoint=t.grpc_endpoint, topic="Ref5Simple", group="Ref5SimpleC", expect=5)
        return view(ok(got))

    seen = on_both(targets, run)
    assert len(seen["apache"]) == 5
    assert_same(seen)


def test_async_sends_then_simple_consumer(java4: Driver, java5: Driver, targets: dict[str, Target]) -> None:
    """8 sendAsync calls in flight at once, each receipt awaited after the last call; then a simple consumer."""

    def run(t: Target) -> Any:
        create(java4, t, "Ref5Async")
        sent = ok(java5.run(cmd="send", endpoint=t.grpc_endpoint, topic="Ref5Async", count=8, mode="async"), t.name)
        got = java5.run(cmd="simple", endpoint=t.grpc_endpoint, topic="Ref5Async", group="Ref5AsyncC", expect=8)
        return {"sent": [e for e in sent if e["event"] == "sent"], "got": view(ok(got, t.name))}

    seen = on_both(targets, run)
    assert seen["apache"]["sent"] == [{"event": "sent", "hasMsgId": True}] * 8
    assert len(seen["apache"]["got"]) == 8
    assert_same(seen)


def test_fifo_message_groups_in_order(java5: Driver, targets: dict[str, Target], tmp_path: Path) -> None:
    """An orderly consumer group and messages in 2 message groups: each group's messages arrive in send order."""

    work = tmp_path / "mqadmin"

    def run(t: Target) -> Any:
        create_typed(t, work, "Ref5Fifo", "FIFO")
        out = mqadmin(t.ns_addr, work, "updateSubGroup", "-c", "RefCluster", "-g", "Ref5FifoC", "-o", "true")
        assert out.returncode == 0, out.stdout + out.stderr
        got = ok(
            java5.run(cmd="push", endpoint=t.grpc_endpoint, topic="Ref5Fifo", group="Ref5FifoC", count=6, groups=2)
        )
        order: dict[str, list[str]] = {}
        for e in got:
            if e["event"] == "msg":
                order.setdefault(e.get("messageGroup", ""), []).append(e["props"]["seq"])
        return {"order": order, "got": view(got)}

    seen = on_both(targets, run)
    assert seen["apache"]["order"] == {"g0": ["0", "2", "4"], "g1": ["1", "3", "5"]}
    assert_same(seen)


def test_delivery_timestamp(java5: Driver, targets: dict[str, Target], tmp_path: Path) -> None:
    """A 2 s delivery time: the message arrives (delay message type) with its delivery timestamp."""

    def run(t: Target) -> Any:
        create_typed(t, tmp_path / "mqadmin", "Ref5Delay", "DELAY")
        got = java5.run(
            cmd="push", endpoint=t.grpc_endpoint, topic="Ref5Delay", group="Ref5DelayC", count=2, delayMs=2000
        )
        return view(ok(got))

    seen = on_both(targets, run)
    assert all(m[6] for m in seen["apache"])
    assert_same(seen)


def test_push_consumer_failure_redelivers(java4: Driver, java5: Driver, targets: dict[str, Target]) -> None:
    """FAILURE on each message's first attempt: it comes again with deliveryAttempt 2."""

    def run(t: Target) -> Any:
        create(java4, t, "Ref5Retry")
        got = java5.run(
            cmd="push",
            endpoint=t.grpc_endpoint,
            topic="Ref5Retry",
            group="Ref5RetryC",
            count=2,
            expect=4,
            fail="once",
            timeoutMs=60_000,
        )
        return view(ok(got))

    seen = on_both(targets, run)
    assert [m[4] for m in seen["apache"]] == [1, 2, 1, 2]
    assert_same(seen)


# A transactional 5.x producer is known to Apache RocketMQ's broker only once the proxy's transaction heartbeat has
# named its group (transactionHeartbeatPeriodSecond); a check before that finds no producer and is dropped, counted.
# The pair below gives a half message TX_CHECKS checks, 1 s apart: the scenario holds only if the proxy announces the
# producer within them. With the proxy's default 20 s, 15 checks ran out first in about 1 run in 8 (no check at all;
# the scenario was marked xfail), and these 5 run out before a fresh proxy's first tick (seen: a timeout on Apache);
# peers.py's 1 s period announces it before the first check.
TX_CHECKS = 5


def test_transaction_committed_by_check_back(java5: Driver, tmp_path: Path) -> None:
    """A transaction left open: the broker asks the checker, which commits; a simple consumer receives it. On a
    cluster pair of its own (a fresh proxy) whose brokers check a half message at most ``TX_CHECKS`` times."""
    need("apache")

    def run(t: Target) -> Any:
        create_typed(t, tmp_path / "mqadmin", "Ref5Tx", "TRANSACTION")
        got = java5.run(
            cmd="transaction",
            endpoint=t.grpc_endpoint,
            topic="Ref5Tx",
            group="Ref5TxC",
            count=2,
            end="none",
            expect=2,
            settleMs=5000,  # Apache: a message committed twice counts twice towards expect; the other one comes later
        )
        # which messages were checked: how often is timing (Apache's broker writes its op markers in batches and checks
        # a committed half again until it has read them; the client may see a second check)
        checks = sorted({e["keys"] for e in got if e["event"] == "check"})
        for e in got:  # how many checks went out before the answer is timing (Apache's proxy: until it routes one)
            if e["event"] == "msg" and e["props"].get("TRANSACTION_CHECK_TIMES", "0").isdigit():
                e["props"]["TRANSACTION_CHECK_TIMES"] = ">=1" if int(e["props"]["TRANSACTION_CHECK_TIMES"]) else "0"
        # distinct messages: a committed half that Apache's broker checks again is committed again by the second
        # answer, so the message can arrive twice there (docs/reference-differences.md); rocketq commits once
        return {"checks": checks, "got": sorted(set(view(ok(got, t.name))))}

    with clusters(tmp_path / "clusters", f"transactionCheckMax={TX_CHECKS}\n") as pair:
        seen = on_both(pair, run)
    assert seen["apache"]["checks"] == ["m-key-0", "m-key-1"]
    assert_same(seen)


def error_view(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The errors as the 5.x client reports them: exception type and the response code in its message (the rest
    of the message carries request ids and hosts)."""
    out = []
    for e in errors(events):
        code = re.search(r"responseCode=(\d+)|response-code=(\d+)|code=(\d+)", e.get("remark", ""))
        out.append((e.get("type", e["event"]), next((g for g in code.groups() if g), "") if code else ""))
    return out


def test_errors_unknown_topic_too_large_read_only(java4: Driver, java5: Driver, targets: dict[str, Target]) -> None:
    """A send to a topic nobody created, a body over the 4 MiB the server's settings allow, and a send to a
    read-only (perm 4) topic: the same exception and response code from both."""

    def run(t: Target) -> Any:
        unknown = java5.run(cmd="send", endpoint=t.grpc_endpoint, topic="Ref5NoSuchTopic", prefetch=False)
        create(java4, t, "Ref5Large")
        large = java5.run(cmd="send", endpoint=t.grpc_endpoint, topic="Ref5Large", bodySize=5 * 1024 * 1024)
        create(java4, t, "Ref5ReadOnly", perm=4)
        readonly = java5.run(cmd="send", endpoint=t.grpc_endpoint, topic="Ref5ReadOnly", prefetch=False)
        return {"unknown": error_view(unknown), "large": error_view(large), "readonly": error_view(readonly)}

    seen = on_both(targets, run)
    assert all(seen["apache"].values()), seen["apache"]
    assert_same(seen)
