"""``latency_bench.py --trace``: timestamps of single messages through every hop of rocketq, in one client process.

A producer and a push consumer (one process, uvloop) against a real name server + broker (async flush). Each traced
message is sent alone after the consumer is idle, so the held pull that returns it is the one traced. Every time is
wall-clock (``time.time_ns``), the clock the broker's storeTimestamp uses; the broker needs no hook: the store time is
what the wire already carries (milliseconds, so that hop is only as exact as 1 ms).

| hop            | taken where                                                                                   |
|----------------|-----------------------------------------------------------------------------------------------|
| send called    | before ``Producer.send`` (the Message already built)                                          |
| frame encoded  | the SEND frame handed to the connection (``RemotingConnection._write`` returned)             |
| send written   | the connection's next flush to the socket (``RemotingConnection._flush`` returned)            |
| stored         | the message's storeTimestamp (broker, ms)                                                     |
| pull response  | the PULL_MESSAGE reply carrying it arrived (``ClientAPI.pull`` returned, frame decoded)       |
| decoded        | the records decoded (``decode_records`` in ``client.consumer.pulling`` returned)              |
| listener call  | the listener entered                                                                          |
| send acked     | ``Producer.send`` returned (concurrent with the consumer's hops)                             |

The client-side hops wrap those functions in this process only (timing wrappers around the real code); a hop whose
function a later change renames shows as "—" instead of failing the trace.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

try:
    from bench._util import table
    from bench.e2e_bench import start_servers
except ImportError:
    from _util import table  # type: ignore[no-redef]
    from e2e_bench import start_servers  # type: ignore[no-redef]

HOPS = (
    "send called",
    "frame encoded",
    "send written",
    "stored",
    "pull response",
    "decoded",
    "listener call",
    "send acked",
)


class Marks:
    """The latest time each hop was seen (ns, wall clock); reset before each traced message."""

    def __init__(self) -> None:
        self.t: dict[str, int] = {}
        self.sending: object = None  # the connection a SEND frame waits in to be flushed

    def mark(self, hop: str, ns: int | None = None) -> None:
        self.t[hop] = time.time_ns() if ns is None else ns


def instrument(marks: Marks, producer: Any, consumer: Any) -> list[str]:
    """Wrap the functions the hops are taken from; returns the hops that could not be instrumented."""
    from protocol.codes import RequestCode
    from protocol.remoting.connection import RemotingConnection

    missing = []
    write = getattr(RemotingConnection, "_write", None)
    flush = getattr(RemotingConnection, "_flush", None)
    sends = {RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_MESSAGE}
    if write is None or flush is None:
        missing += ["frame encoded", "send written"]
    else:

        def traced_write(self: Any, cmd: Any, *rest: Any) -> None:
            write(self, cmd, *rest)
            if cmd.code in sends:
                marks.mark("frame encoded")
                marks.sending = self

        def traced_flush(self: Any, *rest: Any) -> None:
            flush(self, *rest)
            if marks.sending is self:
                marks.sending = None
                marks.mark("send written")

        RemotingConnection._write = traced_write  # type: ignore[method-assign]
        RemotingConnection._flush = traced_flush  # type: ignore[method-assign]

    api = consumer.instance.api
    pull = api.pull

    async def traced_pull(*args: Any, **kwargs: Any) -> Any:
        res = await pull(*args, **kwargs)
        if res[2]:
            marks.mark("pull response")
        return res

    api.pull = traced_pull

    import client.consumer.pulling as pulling

    decode = getattr(pulling, "decode_records", None)
    if decode is None:
        missing.append("decoded")
    else:

        def traced_decode(*args: Any, **kwargs: Any) -> Any:
            out = decode(*args, **kwargs)
            marks.mark("decoded")
            return out

        pulling.decode_records = traced_decode
    return missing


async def _trace(ns: str, count: int, size: int) -> list[dict[str, int]]:
    from client import ConsumeResult, Message, Producer, PushConsumer
    from client.errors import RouteNotFoundError

    topic = f"Trace{int(time.time())}"
    marks = Marks()
    got = asyncio.Event()

    async def listener(msgs: list[Any]) -> ConsumeResult:
        marks.mark("listener call")
        marks.mark("stored", msgs[-1].store_timestamp * 1_000_000)
        got.set()
        return ConsumeResult.SUCCESS

    runs = []
    async with Producer("trace_pg", namesrv_addr=ns) as p:
        deadline = time.monotonic() + 120
        while True:  # the first send creates the topic
            try:
                await p.send(Message(topic, b"warm-up"))
                break
            except RouteNotFoundError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
        c = PushConsumer("trace_cg", namesrv_addr=ns, consume_from_where="FIRST_OFFSET")
        c.subscribe(topic, "*", listener)
        missing = instrument(marks, p, c)  # before the consumer's first pull: a held pull keeps the api it began with
        if missing:
            print(f"  (not instrumented, renamed since: {', '.join(missing)})")
        async with c:
            await asyncio.wait_for(got.wait(), 120)  # the warm-up arrived: the consumer's pulls are held now
            body = b"t" * size
            for _ in range(count):
                await asyncio.sleep(0.3)  # every queue's pull is held again, nothing in flight
                got.clear()
                marks.t.clear()
                msg = Message(topic, body)
                marks.mark("send called")
                await p.send(msg)
                marks.mark("send acked")
                await asyncio.wait_for(got.wait(), 30)
                runs.append(dict(marks.t))
    return runs


def trace(count: int, size: int, runner: Callable[[Coroutine[Any, Any, Any]], Any]) -> None:
    with tempfile.TemporaryDirectory() as d:
        procs, ns = start_servers(Path(d))
        try:
            runs = runner(_trace(ns, count, size))
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(20)
    print(f"trace: {count} messages of {size} B, one at a time, rocketq async flush; ms since 'send called'")
    header = ("hop", *(f"msg {i + 1}" for i in range(len(runs))), "median", "median step")
    rows = []
    prev: float | None = None
    for hop in HOPS:
        vals = [(r[hop] - r["send called"]) / 1e6 if hop in r else None for r in runs]
        got = [v for v in vals if v is not None]
        med = statistics.median(got) if got else None
        coarse = hop in ("send acked", "stored")  # off the chain: concurrent, or whole milliseconds
        step = "" if med is None or prev is None or coarse else f"{med - prev:+.3f}"
        rows.append(
            (hop, *("—" if v is None else f"{v:.3f}" for v in vals), "—" if med is None else f"{med:.3f}", step)
        )
        if med is not None and not coarse:
            prev = med
    table(rows, header)
    print(
        "'stored' is the broker's storeTimestamp in whole milliseconds (up to 1 ms early), so it has no step;"
        " 'send acked' runs concurrently with the consumer's hops."
    )
