"""The official RocketMQ 5.x Python client (PyPI ``rocketmq-python-client`` 5.1.2, gRPC) against ``mqbroker
--enable-proxy`` (``broker.proxy``), all in separate processes: the name server and the broker as in
test_cpp_client, the 5.x clients in ``grpc_driver.py`` reporting JSON lines. Waits poll for lines or broker state
with a deadline; nothing sleeps to synchronise and no timing is asserted.

The broker runs with short delay levels ("1s 2s 3s 4s 5s": the consumers' retry backoff and the delay messages) and
a 1 s transaction check, so the retry, DLQ, delay and orphaned-transaction cases finish in seconds.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from protocol.errors import RemotingError
from tests.compat.cpp_support import Consumer as CppConsumer
from tests.compat.cpp_support import expected, received
from tests.compat.cpp_support import produce as cpp_produce
from tests.compat.driver_events import events
from tests.compat.grpc_support import (
    Env,
    admin,
    create_group,
    create_topic,
    mqadmin,
    msgs,
    produce,
    route,
    start_consumer,
    wait_online,
)
from tests.compat.sdk_support import consume_ours
from tests.eventually import eventually_sync
from tests.servers import Proc, Servers

pytestmark = pytest.mark.compat


def test_producer_to_simple_consumer_1000_exactly_once(env: Env) -> None:
    topic, group, n = "G5Main", "GID_g5_main", 1000
    create_topic(env, topic)
    create_group(env, group)
    c = start_consumer(env, "simple", topic, group, "--count", str(n), "--invisible", "60")
    try:
        conn = mqadmin(env, "consumerConnection", "-g", group)  # the 5.x client, as 4.x tools show it
        assert "PYTHON" in conn and topic in conn, conn
        sent = produce(env, topic, n, "m")
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 180)
    finally:
        c.stop()
    progress = mqadmin(env, "consumerProgress", "-g", group)
    assert "Diff Total: 0" in progress and "InFlight" not in progress, progress
    got = msgs(evs)
    assert [e["acked"] for e in evs if e["event"] == "done"] == [n]
    keys = [m["keys"] for m in got]
    assert len(keys) == n and len(set(keys)) == n  # every message exactly once
    ids = {s["keys"]: s["id"] for s in sent}
    for m in got:
        i = int(m["keys"].rsplit("-", 1)[1])
        assert m["body"] == f"m-body-{i}"
        assert m["tag"] == ("TagA", "TagB", "TagC")[i % 3]
        assert m["props"] == {"seq": str(i), "origin": "py5"}
        assert m["attempt"] == 1 and m["acked"]
        assert m["id"] == ids[m["keys"]]  # the producer's message id survives the broker


def test_unacked_message_reappears_with_attempt_2(env: Env) -> None:
    topic, group = "G5Redeliver", "GID_g5_redeliver"
    create_topic(env, topic, 2)
    create_group(env, group)
    c = start_consumer(env, "simple", topic, group, "--count", "1", "--no-ack-first", "--invisible", "10")
    try:
        produce(env, topic, 1, "r")
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 90)
    finally:
        c.stop()
    got = msgs(evs)
    assert [(m["attempt"], m["acked"]) for m in got] == [(1, False), (2, True)]
    assert got[0]["id"] == got[1]["id"] and got[0]["keys"] == got[1]["keys"] == "r-key-0"


def test_push_consumer_consumes_all_retries_failures_then_dead_letters(env: Env) -> None:
    """retryMaxTimes 2 → max attempts 3: a message that always fails is delivered 3 times, then is in %DLQ%."""
    topic, group, n = "G5Push", "GID_g5_push", 30
    create_topic(env, topic)
    create_group(env, group, retry_max=2)
    c = start_consumer(env, "push", topic, group, "--fail-prefix", "p-key-1")  # p-key-1, p-key-10..19 fail

    try:
        produce(env, topic, n, "p")
        failing = {f"p-key-{i}" for i in range(n) if f"p-key-{i}".startswith("p-key-1")}

        def finished(_ev: dict[str, Any], seen: list[dict[str, Any]]) -> bool:
            ok = {m["keys"] for m in msgs(seen) if not m["failed"]}
            third = {m["keys"] for m in msgs(seen) if m["failed"] and m["attempt"] == 3}
            return len(ok) == n - len(failing) and third == failing

        evs = events(c, finished, 120)
        # the failures reach the group's dead-letter queue once their last nack expires: read it with our 4.x SDK
        # (5.x → 4.x over one store) while the push consumer is still up
        # (a dead-letter topic is routed once its first message is in)
        eventually_sync(lambda: route(env, f"%DLQ%{group}"), timeout=60, what="a DLQ route", ignoring=(RemotingError,))
        dlq = asyncio.run(consume_ours(env.servers.ns_addr, f"%DLQ%{group}", len(failing), "CID_g5_dlq_reader"))
    finally:
        if c.p.stdin is not None:
            c.p.stdin.close()
        c.stop()
    got = msgs(evs)
    for key in failing:
        assert sorted(m["attempt"] for m in got if m["keys"] == key) == [1, 2, 3]
    ok = [m for m in got if not m["failed"]]
    assert {m["keys"] for m in ok} == {f"p-key-{i}" for i in range(n)} - failing
    assert set(dlq) == failing
    for key, m in dlq.items():
        assert m.body.decode() == key.replace("key", "body")
        assert m.properties["DLQ_ORIGIN_TOPIC"] == topic


def test_fifo_group_stays_ordered(env: Env) -> None:
    topic, group, n = "G5Fifo", "GID_g5_fifo", 60
    create_topic(env, topic)
    create_group(env, group, orderly=True)
    c = start_consumer(env, "push", topic, group)
    try:
        produce(env, topic, n, "f", "--kind", "fifo", "--groups", "3")
        evs = events(c, lambda _ev, seen: len({m["keys"] for m in msgs(seen)}) == n, 120)
    finally:
        if c.p.stdin is not None:
            c.p.stdin.close()
        c.stop()
    by_group: dict[str, list[int]] = {}
    for m in msgs(evs):
        by_group.setdefault(m["group"], []).append(int(m["props"]["seq"]))
    assert set(by_group) == {"f-g0", "f-g1", "f-g2"}
    for g, seqs in by_group.items():
        k = int(g[-1])
        assert seqs == [i for i in range(n) if i % 3 == k]  # in send order, each once


def test_fifo_failure_is_retried_locally_then_forwarded_to_the_dlq_and_the_group_goes_on(env: Env) -> None:
    """retryMaxTimes 1 → 2 attempts: the Python FIFO push consumer retries f-key-4 locally, then calls
    ForwardMessageToDeadLetterQueue; its message group then continues in order."""
    topic, group, n = "G5FifoDlq", "GID_g5_fifo_dlq", 12
    create_topic(env, topic)
    create_group(env, group, retry_max=1, orderly=True)
    c = start_consumer(env, "push", topic, group, "--fail-prefix", "ff-key-4")
    try:
        produce(env, topic, n, "ff", "--kind", "fifo", "--groups", "2")
        evs = events(c, lambda _ev, seen: len({m["keys"] for m in msgs(seen) if not m["failed"]}) == n - 1, 120)
        # (a dead-letter topic is routed once its first message is in)
        eventually_sync(lambda: route(env, f"%DLQ%{group}"), timeout=60, what="a DLQ route", ignoring=(RemotingError,))
        dlq = asyncio.run(consume_ours(env.servers.ns_addr, f"%DLQ%{group}", 1, "CID_g5_fifo_dlq_reader"))
    finally:
        if c.p.stdin is not None:
            c.p.stdin.close()
        c.stop()
    assert set(dlq) == {"ff-key-4"}
    assert [m["keys"] for m in msgs(evs) if m["failed"]] == ["ff-key-4", "ff-key-4"]  # 2 local attempts
    g0 = [int(m["props"]["seq"]) for m in msgs(evs) if m["group"] == "ff-g0" and not m["failed"]]
    assert g0 == [0, 2, 6, 8, 10]  # in order, without the dead-lettered 4


def test_transactions_commit_rollback_and_orphan_recovery(env: Env) -> None:
    """tx 0 commits, tx 1 rolls back, tx 2 is left open: the broker's check asks the producer (Telemetry
    RecoverOrphanedTransactionCommand), whose checker commits it."""
    topic, group = "G5Tx", "GID_g5_tx"
    create_topic(env, topic)
    create_group(env, group)
    c = start_consumer(env, "simple", topic, group, "--count", "2")
    p = env.driver(
        "produce", "--topic", topic, "--count", "3", "--prefix", "t", "--kind", "tx", "--tx", "commit,rollback,open",
        "--linger", name="produce-tx",
    )  # fmt: skip
    try:
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 90)
        checks = [e for e in events(p, lambda ev, _s: ev["event"] == "check", 60) if e["event"] == "check"]
    finally:
        if p.p.stdin is not None:
            p.p.stdin.close()
        p.stop()
        c.stop()
    assert sorted(m["keys"] for m in msgs(evs)) == ["t-key-0", "t-key-2"]
    assert checks and checks[0]["keys"] == "t-key-2"


def test_delay_message_arrives_after_its_delay(env: Env) -> None:
    topic, group = "G5Delay", "GID_g5_delay"
    create_topic(env, topic)
    create_group(env, group)
    c = start_consumer(env, "simple", topic, group, "--count", "3")
    try:
        sent = produce(env, topic, 3, "d", "--kind", "delay", "--delay-ms", "2000")
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 90)
    finally:
        c.stop()
    got = msgs(evs)
    assert sorted(m["keys"] for m in got) == ["d-key-0", "d-key-1", "d-key-2"]
    sent_at = {s["keys"]: s["at"] for s in sent}
    for m in got:
        assert m["delivery_ts"] is not None and m["delivery_ts"] >= sent_at[m["keys"]]
        assert m["at"] >= m["delivery_ts"]  # not handed out before its delivery time


# -- bad input: raw v2 requests with our stubs, from this process (the broker is another process) --------------------

MD = (("x-mq-client-id", "compat-raw@1@0@x"), ("x-mq-language", "PYTHON"), ("x-mq-client-version", "5.1.2"))


def _message(topic: str, body: bytes, msg_id: str = "01ABCDEF") -> Any:
    from broker.proxy.pb import definition_pb2 as pb

    m = pb.Message(body=body)
    m.topic.name = topic
    m.system_properties.message_id = msg_id
    m.system_properties.message_type = pb.MessageType.NORMAL
    return m


def test_bad_input_gets_the_status_codes_clients_expect(env: Env, stub: Any) -> None:
    from broker.proxy.pb import definition_pb2 as pb
    from broker.proxy.pb import service_pb2 as spb

    topic, group = "G5Bad", "GID_g5_bad"
    create_topic(env, topic, 1)
    create_group(env, group)
    unknown = spb.QueryRouteRequest()
    unknown.topic.name = "G5NoSuchTopic"
    assert stub.QueryRoute(unknown, metadata=MD, timeout=5).status.code == pb.Code.TOPIC_NOT_FOUND
    system = spb.QueryRouteRequest()
    system.topic.name = "RMQ_SYS_TRANS_HALF_TOPIC"
    assert stub.QueryRoute(system, metadata=MD, timeout=5).status.code == pb.Code.ILLEGAL_TOPIC
    assert stub.QueryRoute(unknown, timeout=5).status.code == pb.Code.CLIENT_ID_REQUIRED
    big = spb.SendMessageRequest(messages=[_message(topic, b"x" * (4 * 1024 * 1024 + 1))])
    resp = stub.SendMessage(big, metadata=MD, timeout=10)
    assert resp.status.code == pb.Code.MESSAGE_BODY_TOO_LARGE
    assert [e.status.code for e in resp.entries] == [pb.Code.MESSAGE_BODY_TOO_LARGE]
    empty = stub.SendMessage(spb.SendMessageRequest(messages=[_message(topic, b"")]), metadata=MD, timeout=5)
    assert empty.status.code == pb.Code.MESSAGE_BODY_EMPTY
    reserved = _message(topic, b"x")
    reserved.user_properties["UNIQ_KEY"] = "mine"
    resp = stub.SendMessage(spb.SendMessageRequest(messages=[reserved]), metadata=MD, timeout=5)
    assert resp.status.code == pb.Code.ILLEGAL_MESSAGE_PROPERTY_KEY
    hb = spb.HeartbeatRequest(client_type=pb.ClientType.SIMPLE_CONSUMER)
    hb.group.name = group
    assert stub.Heartbeat(hb, metadata=MD, timeout=5).status.code == pb.Code.UNRECOGNIZED_CLIENT_TYPE
    for handle in ("garbage", "1_999999_0_1"):
        ack = spb.AckMessageRequest(entries=[spb.AckMessageEntry(message_id="01ABCDEF", receipt_handle=handle)])
        ack.group.name, ack.topic.name = group, topic
        resp = stub.AckMessage(ack, metadata=MD, timeout=5)
        assert resp.status.code == pb.Code.INVALID_RECEIPT_HANDLE
        assert [e.status.code for e in resp.entries] == [pb.Code.INVALID_RECEIPT_HANDLE]
    change = spb.ChangeInvisibleDurationRequest(receipt_handle="garbage", message_id="01ABCDEF")
    change.group.name, change.topic.name = group, topic
    change.invisible_duration.FromSeconds(5)
    assert stub.ChangeInvisibleDuration(change, metadata=MD, timeout=5).status.code == pb.Code.INVALID_RECEIPT_HANDLE
    end = spb.EndTransactionRequest(message_id="01ABCDEF", transaction_id="nope", resolution=pb.COMMIT)
    end.topic.name = topic
    assert stub.EndTransaction(end, metadata=MD, timeout=5).status.code == pb.Code.INVALID_TRANSACTION_ID
    short = _receive_request(topic, group, invisible_s=1)
    first = next(iter(stub.ReceiveMessage(short, metadata=MD, timeout=10)))
    assert first.status.code == pb.Code.ILLEGAL_INVISIBLE_TIME


def _receive_request(topic: str, group: str, *, invisible_s: int = 15, poll_s: int = 5) -> Any:
    from broker.proxy.pb import definition_pb2 as pb
    from broker.proxy.pb import service_pb2 as spb

    req = spb.ReceiveMessageRequest(batch_size=8, auto_renew=False)
    req.group.name = group
    req.message_queue.topic.name = topic
    req.message_queue.id = -1
    req.filter_expression.type = pb.FilterType.TAG
    req.filter_expression.expression = "*"
    req.invisible_duration.FromSeconds(invisible_s)
    req.long_polling_timeout.FromSeconds(poll_s)
    return req


def test_client_vanishing_mid_receive_leaves_the_broker_serving(env: Env, stub: Any) -> None:
    """A receive cancelled while it long-polls takes nothing with it: the next message goes to the next receive,
    and the official client still works."""
    from broker.proxy.pb import definition_pb2 as pb
    from broker.proxy.pb import service_pb2 as spb

    topic, group = "G5Vanish", "GID_g5_vanish"
    create_topic(env, topic, 1)
    create_group(env, group)
    # register the consumer (Telemetry settings) so the group's pop offsets start before anything is sent
    reply = register_simple(stub, group, topic)
    assert reply.settings.backoff_policy.max_attempts == 17
    assert reply.settings.subscription.receive_batch_size == 32
    held = stub.ReceiveMessage(_receive_request(topic, group, poll_s=20), metadata=MD, timeout=25)
    held.cancel()  # the client goes away mid long-poll
    with pytest.raises(Exception, match=r"CANCELLED|Cancelled"):
        next(iter(held))
    sent = stub.SendMessage(spb.SendMessageRequest(messages=[_message(topic, b"after")]), metadata=MD, timeout=5)
    assert sent.status.code == pb.Code.OK
    got = list(stub.ReceiveMessage(_receive_request(topic, group), metadata=MD, timeout=10))
    assert got[0].status.code == pb.Code.OK
    assert [r.message.body for r in got if r.HasField("message")] == [b"after"]
    ack = spb.AckMessageRequest()
    ack.group.name, ack.topic.name = group, topic
    m = next(r.message for r in got if r.HasField("message"))
    ack.entries.append(
        spb.AckMessageEntry(
            message_id=m.system_properties.message_id, receipt_handle=m.system_properties.receipt_handle
        )
    )
    assert stub.AckMessage(ack, metadata=MD, timeout=5).status.code == pb.Code.OK
    again = stub.AckMessage(ack, metadata=MD, timeout=5)  # a handle that was used is stale
    assert again.status.code == pb.Code.INVALID_RECEIPT_HANDLE
    produce(env, topic, 1, "v")  # the official client is unaffected


# -- mixed 4.x / 5.x over one store ---------------------------------------------------------------------------------


def test_cpp_producer_to_a_5x_consumer(env: Env) -> None:
    topic, group, n = "G5FromCpp", "GID_g5_from_cpp", 50
    create_topic(env, topic)
    create_group(env, group)
    c = start_consumer(env, "simple", topic, group, "--count", str(n))
    try:
        assert cpp_produce(env.servers, topic, "sync", "c", count=n)["ok"] == n
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 120)
    finally:
        c.stop()
    got = {m["keys"]: m for m in msgs(evs)}
    assert len(got) == n
    for i in range(n):
        want = expected("c", i)
        m = got[want["keys"]]
        assert (m["body"], m["tag"]) == (want["body"], want["tags"])
        assert {k: m["props"][k] for k in want["props"]} == want["props"]
        assert m["id"]  # the C++ client's UNIQ_KEY is the 5.x message id


def test_5x_producer_to_our_4x_consumer_and_the_cpp_consumer(env: Env) -> None:
    """…and a 5.x consumer group on the same topic at the same time: each group gets every message."""
    topic, n = "G5ToMixed", 50
    create_topic(env, topic)
    create_group(env, "GID_g5_to_mixed")
    five = start_consumer(env, "simple", topic, "GID_g5_to_mixed", "--count", str(n))
    try:
        sent = produce(env, topic, n, "x")
        ours = asyncio.run(consume_ours(env.servers.ns_addr, topic, n, "CID_g5_to_ours"))
        cpp = CppConsumer(env.servers, topic, "CID_g5_to_cpp", "g5-cpp")
        try:
            eventually_sync(lambda: len(received([cpp])) >= n, timeout=90, what=f"{n} messages at the C++ consumer")
        finally:
            cpp.stop()
        five_evs = events(five, lambda ev, _s: ev["event"] == "stopped", 90)
    finally:
        five.stop()
    assert sorted(m["keys"] for m in msgs(five_evs)) == sorted(f"x-key-{i}" for i in range(n))
    ids = {s["keys"]: s["id"] for s in sent}
    for i in range(n):
        key = f"x-key-{i}"
        m = ours[key]
        assert m.body.decode() == f"x-body-{i}" and m.tags == ("TagA", "TagB", "TagC")[i % 3]
        assert m.properties["seq"] == str(i) and m.properties["origin"] == "py5"
        assert m.properties["UNIQ_KEY"] == ids[key]
    got = {m["keys"]: m for m in cpp.msgs}
    for i in range(n):
        m = got[f"x-key-{i}"]
        assert m["body"] == f"x-body-{i}" and m["tags"] == ("TagA", "TagB", "TagC")[i % 3]
        assert m["topic"] == topic


# -- POP state survives a broker restart ----------------------------------------------------------------------------


def restart_broker(servers: Servers) -> None:
    old = servers.procs.pop()
    assert old.stop() == 0, f"broker did not stop cleanly; see {old.log}"
    conf = servers.tmp / "broker.conf"
    br = Proc(
        [sys.executable, "-m", "broker", "-c", str(conf), "-n", servers.ns_addr, "--enable-proxy"],
        servers.tmp / "broker-restarted.log",
    )
    servers.procs.append(br)
    br.wait_line(lambda ln: "boot success" in ln, 30)


def register_simple(stub: Any, group: str, topic: str) -> Any:
    """Register a simple consumer of ``group`` on ``topic`` (a Telemetry settings command); the broker's settings."""
    from broker.proxy.pb import definition_pb2 as pb
    from broker.proxy.pb import service_pb2 as spb

    settings = pb.Settings(client_type=pb.ClientType.SIMPLE_CONSUMER)
    settings.subscription.group.name = group
    sub = settings.subscription.subscriptions.add()
    sub.topic.name = topic
    sub.expression.type, sub.expression.expression = pb.FilterType.TAG, "*"
    telemetry = stub.Telemetry(iter([spb.TelemetryCommand(settings=settings)]), metadata=MD, timeout=10)
    reply = next(iter(telemetry))
    assert reply.status.code == pb.Code.OK
    telemetry.cancel()
    return reply


def test_in_flight_messages_handles_and_attempts_survive_a_restart(env: Env, stub: Any) -> None:
    from broker.proxy.pb import definition_pb2 as pb
    from broker.proxy.pb import service_pb2 as spb

    topic, group = "G5Restart", "GID_g5_restart"
    create_topic(env, topic, 1)
    create_group(env, group)
    register_simple(stub, group, topic)
    for i in range(3):
        m = _message(topic, f"r{i}".encode(), f"01RESTART{i}")
        assert stub.SendMessage(spb.SendMessageRequest(messages=[m]), metadata=MD, timeout=5).status.code == pb.Code.OK
    got = [r.message for r in stub.ReceiveMessage(_receive_request(topic, group), metadata=MD, timeout=10)]
    got = [m for m in got if m.body]
    assert [m.body for m in got] == [b"r0", b"r1", b"r2"]

    def ack(m: Any) -> int:
        req = spb.AckMessageRequest()
        req.group.name, req.topic.name = group, topic
        req.entries.append(
            spb.AckMessageEntry(
                message_id=m.system_properties.message_id, receipt_handle=m.system_properties.receipt_handle
            )
        )
        return int(stub.AckMessage(req, metadata=MD, timeout=5).status.code)

    assert ack(got[0]) == pb.Code.OK
    restart_broker(env.servers)
    assert ack(got[1]) == pb.Code.OK  # a handle issued before the restart still acks

    def receive() -> list[Any]:
        resp = stub.ReceiveMessage(_receive_request(topic, group), metadata=MD, timeout=10)
        return [r.message for r in resp if r.HasField("message")]

    again = eventually_sync(receive, timeout=60, what="the un-acked message to come back", step=0)
    assert [(m.body, m.system_properties.delivery_attempt) for m in again] == [(b"r2", 2)]
    assert again[0].system_properties.message_id == "01RESTART2"
    assert ack(again[0]) == pb.Code.OK


def test_namespaced_5x_clients_meet_namespaced_4x_clients(env: Env) -> None:
    """A 5.x producer and consumer with ``namespace`` use ``ns%topic`` / ``ns%group`` on the broker, the names our
    namespaced SDK (like the Java 4.x client) uses, and the consumer sees the topic without the namespace."""
    from client import Message, Producer

    ns, topic, group = "nsg5", "G5Ns", "GID_g5_ns"
    create_topic(env, f"{ns}%{topic}", 2)
    create_group(env, f"{ns}%{group}")
    c = env.driver("simple", "--topic", topic, "--group", group, "--namespace", ns, "--count", "3", name="simple-ns")
    try:
        events(c, lambda ev, _s: ev["event"] == "started", 60)
        wait_online(env, f"{ns}%{group}")
        produce(env, topic, 2, "ns5", "--namespace", ns)

        async def send_ours() -> None:
            async with Producer("PG_ns_ours", namesrv_addr=env.servers.ns_addr, namespace=ns) as p:
                await p.send(Message(topic, b"ours", keys="ours-key"))

        asyncio.run(send_ours())
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 120)
    finally:
        c.stop()
    got = msgs(evs)
    assert sorted(m["body"] for m in got) == ["ns5-body-0", "ns5-body-1", "ours"]
    assert {m["topic"] for m in got} == {topic}
    assert topic not in admin(env, lambda a: a.topic_list())  # nothing went to the plain name


def test_simple_consumer_of_a_new_group_receives_what_was_sent_before_it(env: Env) -> None:
    """A new POP group starts where RocketMQ 5 starts it (initPopOffsetByCheckMsgInMem): at the queue's first
    message while it is in memory, so a SimpleConsumer created after 50 sends receives all 50."""
    topic, group, n = "G5Before", "GID_g5_before", 50
    create_topic(env, topic, 2)
    create_group(env, group)
    produce(env, topic, n, "b")
    c = start_consumer(env, "simple", topic, group, "--count", str(n), "--invisible", "60")
    try:
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 120)
    finally:
        c.stop()
    keys = sorted(m["keys"] for m in msgs(evs))
    assert keys == sorted(f"b-key-{i}" for i in range(n))
