"""The chaos suite's clients, run from the host namespace against the cluster: a producer of our SDK (and, in some
runs, the official C++ client in its own process, ``cpp_producer.py``) sending continuously to fixed queues of the
orderly topic, a probe of our SDK (``PROBE``: the same, slower, with a 0.5 s send timeout) that marks when the
cluster takes writes again, and two push consumers consuming throughout, each in its own consumer group: ours
(``CONSUMER_GROUP``) and the official C++ client's (``CPP_CONSUMER_GROUP``, its own process, ``cpp_consumer.py``). Every acknowledged send is recorded (``Ack``) with
what the broker said: queue, queue offset, the broker that acked (from the offset msgId) and when; every failed send
is recorded too (``Failure``), for the unavailability windows.

Bodies (and keys) are ``<client>-<seq>``: the checker matches acks to the final log by them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from client import Message, Producer
from client.consumer.push import PushConsumer
from client.results import ConsumeResult
from protocol.bodies.mq import MessageQueue
from protocol.message_ext import MessageExt
from protocol.msg_id import decode_offset_msg_id
from tests.chaos.nodes import GROUP, REPO

TOPIC = "ChaosOrderTopic"
QUEUES = 4
CONSUMER_GROUP = "CG_chaos"
CPP_CONSUMER_GROUP = "CG_chaos_cpp"


@dataclass(frozen=True)
class Ack:
    key: str
    queue_id: int  # -1: not reported (the C++ client's SendResult has no queue)
    queue_offset: int
    acker: str  # "ip:port" of the broker that stored it; "" when not reported
    sent: float  # time.time() when the send began
    acked: float  # and when its ack arrived


@dataclass(frozen=True)
class Failure:
    key: str
    at: float
    error: str


@dataclass
class Record:
    acks: list[Ack] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    consumed: list[tuple[str, int, int]] = field(default_factory=list)  # ours: (key, queue id, queue offset)
    consumed_cpp: list[tuple[str, int, int]] = field(default_factory=list)  # the C++ push consumer's


@dataclass(frozen=True)
class Pace:
    """How a producer sends: its per-send timeout, and the pause after each ack (0: back to back)."""

    timeout_s: float = 3.0  # J's sendMsgTimeout
    pause_s: float = 0.0


PROBE = Pace(timeout_s=0.5, pause_s=0.1)  # the probe: tries often with a short timeout, so it sees the first moment
# the new master takes writes (the main producer may be waiting out J's 3 s timeout on the silent old master then)


async def produce(ns_addr: str, record: Record, stop: asyncio.Event, prefix: str = "py", pace: Pace = Pace()) -> None:
    """Send ``<prefix>-<seq>`` to queue seq % QUEUES (one message at a time, so each queue's order is the send
    order) until ``stop``; a failed send is recorded and the next one tried (a new key)."""
    producer = Producer(
        f"PG_chaos_{prefix}", ns_addr, poll_namesrv_interval=1.0, send_timeout_ms=int(pace.timeout_s * 1000)
    )
    await producer.start()
    try:
        seq = 0
        while not stop.is_set():
            key = f"{prefix}-{seq}"
            mq = MessageQueue(TOPIC, GROUP, seq % QUEUES)
            began = time.time()
            try:
                r = await producer.send(Message(TOPIC, key.encode(), keys=key), queue=mq, timeout=pace.timeout_s)
            except Exception as exc:
                record.failures.append(Failure(key, time.time(), _brief(f"{type(exc).__name__}: {exc}")))
                await asyncio.sleep(0.05)
            else:
                if r.send_status.name == "SEND_OK":
                    ip, port, _ = decode_offset_msg_id(r.offset_msg_id.split(",")[0])
                    record.acks.append(
                        Ack(key, r.message_queue.queue_id, r.queue_offset, f"{ip}:{port}", began, time.time())
                    )
                else:
                    record.failures.append(Failure(key, time.time(), r.send_status.name))
                if pace.pause_s:
                    await asyncio.sleep(pace.pause_s)
            seq += 1
    finally:
        await producer.close()


@contextlib.asynccontextmanager
async def consuming(ns_addr: str, record: Record) -> AsyncIterator[PushConsumer]:
    """Our push consumer on the topic for the duration of the block; what it gets goes to ``record.consumed``."""

    async def on_msgs(msgs: list[MessageExt]) -> ConsumeResult:
        for m in msgs:
            record.consumed.append((m.body.decode(), m.queue_id, m.queue_offset))
        return ConsumeResult.SUCCESS

    consumer = PushConsumer(
        CONSUMER_GROUP,
        ns_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        persist_consumer_offset_interval_ms=1000,
        poll_namesrv_interval=1.0,
    )
    consumer.subscribe(TOPIC, "*", on_msgs)
    await consumer.start()
    try:
        yield consumer
    finally:
        await consumer.close()


def _brief(text: str) -> str:
    """An error's head and tail (a broker's refusal puts its reason after J's long remark)."""
    return text if len(text) <= 320 else f"{text[:100]} … {text[-200:]}"


class _CppProcess:
    """A script of the official C++ client in its own process (librocketmq is not fork-safe): its JSON lines go to
    ``out``; closing its stdin tells it to stop."""

    def __init__(self, script: str, args: list[str], out: Path) -> None:
        self.out = out
        self._sink = out.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name(script)), *args],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=self._sink,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def events(self) -> list[dict[str, Any]]:
        """Its complete lines so far."""
        text = self.out.read_text(errors="replace")
        return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line]

    def _stop(self) -> int | None:
        """Stop it; its exit status (None when it had to be killed)."""
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self._sink.close()


class CppProducer(_CppProcess):
    """The official C++ client (PyPI ``rocketmq`` 0.4.4) sending ``cpp-<seq>`` continuously (``cpp_producer.py``),
    its JSON lines parsed into the record when it stops."""

    def __init__(self, ns_addr: str, out: Path) -> None:
        super().__init__("cpp_producer.py", [ns_addr, TOPIC], out)

    def stop(self, record: Record) -> None:
        self._stop()
        for ev in self.events():
            if ev["event"] == "sent" and ev["status"] == 0:
                # the wheel's SendResult has the UNIQ id, not the offset msgId: the acking broker is not reported
                record.acks.append(Ack(ev["key"], -1, ev["offset"], "", ev["sent"], ev["acked"]))
            elif ev["event"] in ("sent", "error"):
                record.failures.append(Failure(ev["key"], ev["acked"], str(ev.get("error") or ev.get("status"))))


class CppConsumer(_CppProcess):
    """The official C++ client's push consumer (``cpp_consumer.py``, group ``CPP_CONSUMER_GROUP``, clustering)
    consuming the topic; ``consumed()`` is what it has been given so far."""

    def __init__(self, ns_addr: str, out: Path) -> None:
        super().__init__("cpp_consumer.py", [ns_addr, TOPIC, CPP_CONSUMER_GROUP], out)

    def consumed(self) -> list[tuple[str, int, int]]:
        return [(ev["key"], ev["queue"], ev["offset"]) for ev in self.events() if ev["event"] == "consumed"]

    def started(self) -> bool:
        assert self.proc.poll() is None, f"the C++ consumer exited ({self.proc.returncode}), see {self.out}"
        return any(ev["event"] == "started" for ev in self.events())

    def stop(self, record: Record) -> str | None:
        """Stop it and put what it consumed into the record; a note when it did not end cleanly."""
        crashed = self.proc.poll()
        rc = self._stop()
        record.consumed_cpp = self.consumed()
        if crashed is not None or rc != 0:
            return f"the C++ consumer ended with status {crashed if crashed is not None else rc}"
        return None
