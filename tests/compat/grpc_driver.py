"""Drives the official RocketMQ 5.x Python client (PyPI ``rocketmq-python-client`` 5.1.2, gRPC) in its own process for
tests/compat/test_grpc_client.py, reporting JSON lines on stdout (``{"event": ...}``).

    grpc_driver.py produce --endpoint H:P --topic T --count N --prefix P [--kind normal|fifo|delay|tx] [...]
    grpc_driver.py simple  --endpoint H:P --topic T --group G --count N [--no-ack-first] [--invisible S] [--sql E]
    grpc_driver.py push    --endpoint H:P --topic T --group G [--fail-prefix X]

Every command takes ``--ak``/``--sk`` (ACL credentials) and ``--namespace``. A refused start-up reports ``startup_failed``, a refused send
``send_failed``, a refused receive ``receive_failed`` (``done`` counts ``ok`` and ``failed``).

``simple`` stops after ``count`` acked messages; ``push`` and a lingering producer stop when stdin closes.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

from rocketmq.grpc_protocol import FilterType, TransactionResolution
from rocketmq.v5.client import ClientConfiguration, Credentials
from rocketmq.v5.consumer import ConsumeResult, MessageListener, PushConsumer, SimpleConsumer
from rocketmq.v5.model import FilterExpression, Message
from rocketmq.v5.producer import Producer, TransactionChecker


def emit(**ev: Any) -> None:
    sys.stdout.write(json.dumps(ev) + "\n")
    sys.stdout.flush()


def now_ms() -> int:
    return int(time.time() * 1000)


def describe(m: Message) -> dict[str, Any]:
    return {
        "keys": sorted(m.keys)[0] if m.keys else "",
        "body": m.body.decode(),
        "tag": m.tag,
        "props": dict(m.properties),
        "attempt": m.delivery_attempt,
        "id": m.message_id,
        "group": m.message_group,
        "delivery_ts": m.delivery_timestamp,
        "topic": m.topic,
        "at": now_ms(),
    }


def config(a: argparse.Namespace) -> ClientConfiguration:
    return ClientConfiguration(a.endpoint, Credentials(a.ak, a.sk), a.namespace)


class Checker(TransactionChecker):
    def check(self, message: Message) -> Any:
        emit(event="check", keys=sorted(message.keys)[0] if message.keys else "")
        return TransactionResolution.COMMIT


def produce(a: argparse.Namespace) -> None:
    p = Producer(config(a), (a.topic,), checker=Checker() if a.kind == "tx" else None)
    try:
        p.startup()
    except Exception as exc:  # refused by the broker (ACL): the client reports it
        emit(event="startup_failed", error=f"{type(exc).__name__}: {exc}")
        emit(event="done", ok=0, failed=a.count)
        emit(event="stopped")
        return
    emit(event="started")
    ok = failed = 0
    for i in range(a.count):
        m = Message()
        m.topic = a.topic
        m.body = f"{a.prefix}-body-{i}".encode()
        m.tag = ("TagA", "TagB", "TagC")[i % 3]
        m.keys = f"{a.prefix}-key-{i}"
        m.add_property("seq", str(i))
        m.add_property("origin", "py5")
        if a.kind == "fifo":
            m.message_group = f"{a.prefix}-g{i % a.groups}"
        if a.kind == "delay":
            m.delivery_timestamp = (now_ms() + a.delay_ms) // 1000  # the client takes epoch seconds
        if a.kind == "tx":
            tx = p.begin_transaction()
            r = p.send(m, tx)
            resolution = a.tx[i % len(a.tx)]
            if resolution == "commit":
                tx.commit()
            elif resolution == "rollback":
                tx.rollback()
            emit(event="sent", keys=m.keys and sorted(m.keys)[0], id=r.message_id, resolution=resolution)
        else:
            try:
                r = p.send(m)
            except Exception as exc:
                failed += 1
                emit(event="send_failed", keys=sorted(m.keys)[0], error=f"{type(exc).__name__}: {exc}")
                continue
            emit(event="sent", keys=sorted(m.keys)[0], id=r.message_id, at=now_ms())
        ok += 1
    emit(event="done", ok=ok, failed=failed)
    if a.linger:
        sys.stdin.read()
    p.shutdown()
    emit(event="stopped")


def filter_expression(a: argparse.Namespace) -> FilterExpression:
    return FilterExpression(a.sql, FilterType.SQL) if a.sql else FilterExpression(a.tag)


def simple(a: argparse.Namespace) -> None:
    c = SimpleConsumer(config(a), a.group, {a.topic: filter_expression(a)}, await_duration=a.await_s)
    try:
        c.startup()
    except Exception as exc:  # refused by the broker (ACL)
        emit(event="startup_failed", error=f"{type(exc).__name__}: {exc}")
        emit(event="stopped")
        return
    emit(event="started")
    acked = 0
    deadline = time.monotonic() + a.deadline
    while acked < a.count and time.monotonic() < deadline:
        try:
            got = c.receive(32, a.invisible)
        except Exception as exc:  # refused by the broker (ACL)
            emit(event="receive_failed", error=f"{type(exc).__name__}: {exc}")
            break
        for m in got:
            ev = describe(m)
            if a.no_ack_first and m.delivery_attempt == 1:
                emit(event="msg", acked=False, **ev)
                continue
            c.ack(m)
            acked += 1
            emit(event="msg", acked=True, **ev)
    emit(event="done", acked=acked)
    c.shutdown()
    emit(event="stopped")


def push(a: argparse.Namespace) -> None:
    class Listener(MessageListener):
        def consume(self, m: Message) -> ConsumeResult:
            ev = describe(m)
            fail = bool(a.fail_prefix) and ev["keys"].startswith(a.fail_prefix)
            emit(event="msg", failed=fail, **ev)
            return ConsumeResult.FAILURE if fail else ConsumeResult.SUCCESS

    c = PushConsumer(config(a), a.group, Listener(), {a.topic: filter_expression(a)})
    c.startup()
    emit(event="started")
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait()
    c.shutdown()
    emit(event="stopped")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("produce", "simple", "push"):
        s = sub.add_parser(name)
        s.add_argument("--endpoint", required=True)
        s.add_argument("--topic", required=True)
        s.add_argument("--group", default="")
        s.add_argument("--tag", default="*")
        s.add_argument("--sql", default="", help="a SQL92 filter instead of the tag one")
        s.add_argument("--count", type=int, default=1)
        s.add_argument("--prefix", default="py5")
        s.add_argument("--kind", default="normal", choices=("normal", "fifo", "delay", "tx"))
        s.add_argument("--groups", type=int, default=3)
        s.add_argument("--delay-ms", type=int, default=2000)
        s.add_argument("--tx", type=lambda v: v.split(","), default=["commit"])
        s.add_argument("--linger", action="store_true")
        s.add_argument("--no-ack-first", action="store_true")
        s.add_argument("--invisible", type=int, default=30)
        s.add_argument("--await-s", type=int, default=5)
        s.add_argument("--deadline", type=float, default=120)
        s.add_argument("--fail-prefix", default="")
        s.add_argument("--ak", default="", help="ACL access key (empty: no credentials)")
        s.add_argument("--sk", default="")
        s.add_argument("--namespace", default="", help="the client's namespace (x-mq-namespace)")
    a = ap.parse_args()
    {"produce": produce, "simple": simple, "push": push}[a.cmd](a)


if __name__ == "__main__":
    main()
