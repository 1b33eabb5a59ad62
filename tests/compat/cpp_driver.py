"""Drive the official C++ client (PyPI ``rocketmq`` 0.4.4) in its own process and report as JSON lines on stdout.

librocketmq is not fork-safe and can crash its host process, so compat tests run this script with
``sys.executable`` instead of importing the client. Sub-commands:

    produce --namesrv ADDR --topic T --group G --count N --mode sync|async|oneway [--prefix P]
        sends N messages with keys, tags (TagA/TagB/TagC in turn) and user properties; prints one
        {"event":"sent",...} per sync/async result and finally {"event":"done","ok":..,"failed":..}
    consume --namesrv ADDR --topic T --group G [--expr '*'] [--instance NAME] [--orderly] [--fail-first]
        prints {"event":"started"} then {"event":"msg",...} per message, until SIGTERM/SIGINT or stdin closes;
        then shuts the consumer down (which commits its offsets) and prints {"event":"stopped"}.
        --fail-first raises from the listener on a message's first delivery (the wheel's way to say
        RECONSUME_LATER); --orderly registers an orderly listener.
        --broadcast puts the consumer in BROADCASTING mode (offsets kept by the client, every consumer gets all).
    produce --mode orderly sends with send_orderly, sharding key = seq % 4 (property "shard").
    produce --mode batch sends with send_batch, ten messages per batch.
    produce/consume --ak AK --sk SK sign every request (set_session_credentials, channel "ALIYUN").
    produce --delay L sets delay level L on every message; --body-size N pads each body to N bytes (the C++ producer
        compresses bodies over 4 KiB). Message lines carry body_len and body_sha (sha256, 16 hex) and only carry the
        body itself when it is under 200 bytes.
    pull --namesrv ADDR --topic T --group G [--expr '*']
        the wheel's PullConsumer: one pass over every queue of T from offset 0 until each says no new message;
        prints {"event":"msg",...} per message and {"event":"done","count":N}.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import sys
import threading
import time
from typing import Any

_out_lock = threading.Lock()


def emit(**fields: Any) -> None:
    line = json.dumps(fields, separators=(",", ":"))
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


TAGS = ("TagA", "TagB", "TagC")


def text(value: Any) -> Any:
    """The wheel returns some fields as bytes (tags, keys, body, properties) and some as str."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def make_body(prefix: str, i: int, size: int) -> bytes:
    head = f"{prefix}-body-{i}".encode()
    return head + b"." * (size - len(head)) if size > len(head) else head


def produce(args: argparse.Namespace) -> int:
    from rocketmq.client import Message, Producer

    producer = Producer(args.group, timeout=10_000)
    producer.set_namesrv_addr(args.namesrv)
    if args.ak:
        producer.set_session_credentials(args.ak, args.sk, "ALIYUN")
    producer.start()
    ok = failed = 0
    pending = threading.Semaphore(0)
    lock = threading.Lock()
    counts = {"ok": 0, "failed": 0}

    def on_ok(res: Any) -> None:
        with lock:
            counts["ok"] += 1
        pending.release()

    def on_err(exc: Exception) -> None:
        with lock:
            counts["failed"] += 1
        emit(event="error", error=str(exc)[:300])
        pending.release()

    batch: list[Any] = []
    try:
        for i in range(args.count):
            msg = Message(args.topic)
            msg.set_keys(f"{args.prefix}-key-{i}")
            msg.set_tags(TAGS[i % len(TAGS)])
            msg.set_property("seq", str(i))
            msg.set_property("origin", "cpp")
            msg.set_property("shard", str(i % 4))
            msg.set_body(make_body(args.prefix, i, args.body_size))
            if args.delay:
                msg.set_delay_time_level(args.delay)
            if args.mode == "batch":
                batch.append(msg)
                if len(batch) == 10 or i == args.count - 1:
                    res = producer.send_batch(batch)
                    ok += len(batch)
                    emit(event="sent", seq=i, status=int(res.status), msg_id=res.msg_id, offset=res.offset)
                    batch = []
            elif args.mode == "sync":
                for attempt in range(3):
                    try:
                        res = producer.send_sync(msg)
                        ok += 1
                        emit(event="sent", seq=i, status=int(res.status), msg_id=res.msg_id, offset=res.offset)
                        break
                    except Exception as exc:  # a route not there yet: retry a little
                        if attempt == 2:
                            failed += 1
                            emit(event="error", seq=i, error=str(exc)[:300])
                        time.sleep(0.5)
            elif args.mode == "orderly":
                res = producer.send_orderly(msg, i % 4)
                ok += 1
                emit(event="sent", seq=i, status=int(res.status), msg_id=res.msg_id, offset=res.offset)
            elif args.mode == "async":
                producer.send_async(msg, on_ok, on_err)
            else:
                producer.send_oneway(msg)
                ok += 1
        if args.mode == "async":
            for _ in range(args.count):
                if not pending.acquire(timeout=60):
                    break
            ok, failed = counts["ok"], counts["failed"]
    finally:
        producer.shutdown()
    emit(event="done", ok=ok, failed=failed)
    return 0


def message_fields(msg: Any) -> dict[str, Any]:
    raw = msg.body if isinstance(msg.body, bytes) else str(msg.body).encode()
    return {
        "topic": text(msg.topic),
        "tags": text(msg.tags),
        "keys": text(msg.keys),
        "body": text(raw) if len(raw) < 200 else None,
        "body_len": len(raw),
        "body_sha": hashlib.sha256(raw).hexdigest()[:16],
        "born_ts": msg.born_timestamp,
        "store_ts": msg.store_timestamp,
        "id": text(msg.id),
        "queue_id": msg.queue_id,
        "offset": msg.queue_offset,
        "props": {k: text(msg.get_property(k)) for k in ("seq", "origin")},
        "shard": text(msg.get_property("shard")),
        "reconsume_times": msg.reconsume_times,
    }


def pull(args: argparse.Namespace) -> int:
    from rocketmq.client import PullConsumer

    consumer = PullConsumer(args.group)
    consumer.set_namesrv_addr(args.namesrv)
    consumer.start()
    count = 0
    try:
        for msg in consumer.pull(args.topic, args.expr):
            emit(event="msg", **message_fields(msg))
            count += 1
    finally:
        consumer.shutdown()
    emit(event="done", count=count)
    return 0


def consume(args: argparse.Namespace) -> int:
    from rocketmq.client import MessageModel, PushConsumer

    stop = threading.Event()
    consumer = PushConsumer(args.group, orderly=args.orderly)
    consumer.set_namesrv_addr(args.namesrv)
    if args.broadcast:
        consumer.set_message_model(MessageModel.BROADCASTING)
    if args.instance:
        consumer.set_instance_name(args.instance)
    consumer.set_thread_count(2)
    if args.ak:
        consumer.set_session_credentials(args.ak, args.sk, "ALIYUN")

    def on_message(msg: Any) -> None:
        if args.fail_first and msg.reconsume_times == 0:
            emit(event="failed", keys=text(msg.keys), reconsume_times=msg.reconsume_times)
            raise RuntimeError("fail the first delivery: RECONSUME_LATER")
        emit(event="msg", **message_fields(msg))

    consumer.subscribe(args.topic, on_message, args.expr)
    consumer.start()
    emit(event="started")
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def watch_stdin() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    stop.wait()
    consumer.shutdown()
    emit(event="stopped")
    return 0


def main() -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("produce")
    pp.add_argument("--namesrv", required=True)
    pp.add_argument("--topic", required=True)
    pp.add_argument("--group", default="PID_compat")
    pp.add_argument("--count", type=int, default=10)
    pp.add_argument("--mode", choices=("sync", "async", "oneway", "orderly", "batch"), default="sync")
    pp.add_argument("--prefix", default="m")
    pp.add_argument("--delay", type=int, default=0)
    pp.add_argument("--body-size", type=int, default=0)
    pp.add_argument("--ak", default="")
    pp.add_argument("--sk", default="")
    pc = sub.add_parser("consume")
    pc.add_argument("--namesrv", required=True)
    pc.add_argument("--topic", required=True)
    pc.add_argument("--group", required=True)
    pc.add_argument("--expr", default="*")
    pc.add_argument("--instance", default="")
    pc.add_argument("--orderly", action="store_true")
    pc.add_argument("--fail-first", action="store_true")
    pc.add_argument("--broadcast", action="store_true")
    pc.add_argument("--ak", default="")
    pc.add_argument("--sk", default="")
    pl = sub.add_parser("pull")
    pl.add_argument("--namesrv", required=True)
    pl.add_argument("--topic", required=True)
    pl.add_argument("--group", required=True)
    pl.add_argument("--expr", default="*")
    args = p.parse_args()
    return {"produce": produce, "consume": consume, "pull": pull}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
