"""``latency_bench.py --trace``: timestamps of single messages through every hop of rocketq, in one client process.

A producer and a push consumer (one process, uvloop) against a real name server + broker (async flush); with
``--trace-procs 2`` workload B's shape instead: the producer (``client.sync``, its direct path) in a child process,
the push consumer (pull batch 32) here, the send time carried in the body — the single-process shape puts the
producer's own reply handling on the consumer's loop between "decoded" and "listener call". Each traced
message is sent alone after the consumer is idle, so the held pull that returns it is the one traced. Every time is
wall-clock (``time.time_ns``), the clock the broker's storeTimestamp uses; the broker needs no hook: the store time is
what the wire already carries (milliseconds, so that hop is only as exact as 1 ms).

| hop            | taken where                                                                                   |
|----------------|-----------------------------------------------------------------------------------------------|
| send called    | before ``Producer.send`` (the Message already built)                                          |
| send handed    | the SEND command handed to its connection (``ClientAPI._request`` called; the frame is encoded next) |
| send written   | the SEND frame's bytes handed to the socket (the producer connection's ``transport.write``;  |
|                | two processes: ``client.direct``'s ``encode_frame`` returned, its ``sendall`` next)           |
| stored         | the message's storeTimestamp (broker, ms)                                                     |
| pull response  | the PULL_MESSAGE reply carrying it arrived (``ClientAPI.pull`` returned, frame decoded)       |
| decoded        | the records decoded (``decode_records`` in ``client.consumer.pulling`` returned)              |
| listener call  | the listener entered                                                                          |
| send acked     | ``Producer.send`` returned (concurrent with the consumer's hops)                             |

"median step" is the median of each message's own time from the hop above (a difference of the column medians is
not robust on a loaded machine). The client-side hops wrap those functions in this process only (timing wrappers around the real code); the
connection is a compiled class in the compiled build (its methods cannot be wrapped, and its calls to its own methods
would not see a wrapper), so "send written" wraps the producer connection's transport object instead. A hop whose
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
    "send handed",
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

    def mark(self, hop: str, ns: int | None = None) -> None:
        self.t[hop] = time.time_ns() if ns is None else ns


class _MarkingTransport:
    """The producer connection's transport, marking "send written" at the first write after "send handed"."""

    def __init__(self, inner: Any, marks: Marks) -> None:
        self._inner = inner
        self._marks = marks

    def _mark(self) -> None:
        if "send handed" in self._marks.t and "send written" not in self._marks.t:
            self._marks.mark("send written")

    def write(self, data: bytes) -> None:
        self._inner.write(data)
        self._mark()

    def writelines(self, data: list[bytes]) -> None:
        self._inner.writelines(data)
        self._mark()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def instrument_producer(marks: Marks, producer: Any) -> list[str]:
    """Wrap the producer's hops (its connections must be open: call after the first send)."""
    api = producer.instance.api
    request = getattr(api, "_request", None)
    conns = getattr(api.remoting, "_conns", None)
    if request is None or not conns:
        return ["send handed", "send written"]

    def traced_request(addr: str, cmd: Any, *args: Any, **kwargs: Any) -> Any:
        marks.mark("send handed")
        return request(addr, cmd, *args, **kwargs)

    api._request = traced_request
    for conn in conns.values():
        conn._transport = _MarkingTransport(conn._transport, marks)
    return []


def instrument(marks: Marks, producer: Any, consumer: Any) -> list[str]:
    """Wrap the functions the hops are taken from; returns the hops that could not be instrumented."""
    return instrument_producer(marks, producer) + instrument_consumer(marks, consumer)


def instrument_consumer(marks: Marks, consumer: Any) -> list[str]:
    """Wrap the consumer's hops (before its first pull: a held pull keeps the api it began with)."""
    missing: list[str] = []
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


async def split_producer(ns: str, topic: str, count: int, size: int) -> dict[str, Any]:
    """The two-process trace's producer (a child process): workload B's sender, ``client.sync`` (its direct path),
    one message every 0.3 s carrying its ``time.time_ns()`` send time, so the consumer's pulls are held. Returns each
    message's (send called, frame encoded — ``client.direct``'s ``encode_frame`` returned, the socket write next —,
    send acked) times."""
    try:
        from bench._systems import RocketqClient, body
    except ImportError:
        from _systems import RocketqClient, body  # type: ignore[no-redef]
    import client.direct as direct

    encode = direct.encode_frame
    encoded = [0]

    def traced_encode(cmd: Any) -> bytes:
        out = encode(cmd)
        encoded[0] = time.time_ns()
        return out

    direct.encode_frame = traced_encode
    c = RocketqClient(ns, topic, one_in_flight=True)
    await c.open()
    hops = []
    try:
        for _ in range(count):
            await asyncio.sleep(0.3)
            encoded[0] = 0
            sent = time.time_ns()
            await c.send(body(size, sent))
            hops.append((sent, encoded[0], time.time_ns()))
    finally:
        await c.close()
    return {"hops": hops}


async def _trace_split(ns: str, count: int, size: int, start_child: Any) -> list[dict[str, int]]:
    """Workload B's shape: the producer in a child process (``split_producer``), the push consumer (pull batch 32)
    in this one; "send called" is the send time the body carries."""
    try:
        from bench._systems import sent_ns
    except ImportError:
        from _systems import sent_ns  # type: ignore[no-redef]
    from client import ConsumeResult, Message, Producer, PushConsumer
    from client.errors import RouteNotFoundError

    topic = f"TraceSplit{int(time.time())}"
    marks = Marks()
    runs: list[dict[str, int]] = []
    warm = asyncio.Event()
    done = asyncio.Event()

    async def listener(msgs: list[Any]) -> ConsumeResult:
        marks.mark("listener call")
        sent = sent_ns(msgs[-1].body) if len(msgs[-1].body) >= 8 else 0
        if sent == 0:
            warm.set()
        else:
            marks.mark("send called", sent)
            marks.mark("stored", msgs[-1].store_timestamp * 1_000_000)
            runs.append(dict(marks.t))
            if len(runs) >= count:
                done.set()
        marks.t.clear()
        return ConsumeResult.SUCCESS

    async with Producer("trace_pg", namesrv_addr=ns) as p:  # creates the topic
        deadline = time.monotonic() + 120
        while True:
            try:
                await p.send(Message(topic, b"\0" * 8))
                break
            except RouteNotFoundError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
    c = PushConsumer(
        "trace_cg", namesrv_addr=ns, consume_from_where="FIRST_OFFSET", pull_batch_size=32,
        consume_message_batch_max_size=32,
    )  # fmt: skip
    c.subscribe(topic, "*", listener)
    missing = instrument_consumer(marks, c)
    if missing:
        print(f"  (not instrumented, renamed since: {', '.join(missing)})")
    async with c:
        await asyncio.wait_for(warm.wait(), 120)
        proc, result = start_child(split_producer, ns, topic, count, size)
        try:
            await asyncio.wait_for(done.wait(), 60 + count)
            status, produced = await asyncio.to_thread(result.get, True, 60)
        finally:
            proc.join(30)
            if proc.is_alive():
                proc.kill()
    if status == "ok":  # the producer's hops, matched by the send time the body carried
        by_sent = {sent: (enc, acked) for sent, enc, acked in produced["hops"]}
        for r in runs:
            enc, acked = by_sent.get(r["send called"], (0, 0))
            if enc:
                r["send written"] = enc
            if acked:
                r["send acked"] = acked
    return runs


def trace(count: int, size: int, runner: Callable[[Coroutine[Any, Any, Any]], Any], start_child: Any = None) -> None:
    """Print the hops of ``count`` messages; with ``start_child`` (latency_bench's) the producer is a child process
    (workload B's shape), else producer and consumer share this process and loop."""
    with tempfile.TemporaryDirectory() as d:
        procs, ns = start_servers(Path(d))
        try:
            runs = runner(
                _trace(ns, count, size) if start_child is None else _trace_split(ns, count, size, start_child)
            )
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(20)
    shape = "one process" if start_child is None else "producer (client.sync) in a child process"
    print(f"trace: {count} messages of {size} B, one at a time, {shape}, rocketq async flush; ms since 'send called'")
    header = ("hop", *(f"msg {i + 1}" for i in range(len(runs))), "median", "median step")
    rows = []
    prev: str | None = None
    for hop in HOPS:
        vals = [(r[hop] - r["send called"]) / 1e6 if hop in r else None for r in runs]
        got = [v for v in vals if v is not None]
        if not got and start_child is not None:
            continue  # a producer-side hop the child could not time
        med = statistics.median(got) if got else None
        coarse = hop in ("send acked", "stored")  # off the chain: concurrent, or whole milliseconds
        # the median of each message's own step from the hop before (robust where a difference of medians is not)
        steps = [(r[hop] - r[prev]) / 1e6 for r in runs if prev is not None and hop in r and prev in r]
        step = "" if not steps or coarse else f"{statistics.median(steps):+.3f}"
        rows.append(
            (hop, *("—" if v is None else f"{v:.3f}" for v in vals), "—" if med is None else f"{med:.3f}", step)
        )
        if got and not coarse:
            prev = hop
    table(rows, header)
    print(
        "'stored' is the broker's storeTimestamp in whole milliseconds (up to 1 ms early), so it has no step;"
        " 'send acked' runs concurrently with the consumer's hops."
    )
