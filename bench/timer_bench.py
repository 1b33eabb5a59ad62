"""Timer messages: delivery lateness for delays of 1 s, 10 s and 60 s and across a broker SIGKILL, and the memory a
million pending timers cost.

    python bench/timer_bench.py                       # accuracy (default timerPrecisionMs=1000) + kill -9 + 1M memory
    python bench/timer_bench.py --precision 100 --per-delay 100
    python bench/timer_bench.py --only memory --pending 1000000

Accuracy: a name server and a broker as processes (``tests.servers.launch``); our SDK sends messages with
TIMER_DELIVER_MS = send time + delay, spread over a few seconds so they sample every phase of the wheel's slots;
a push consumer records when each arrives. Lateness = arrival − TIMER_DELIVER_MS (the broker's share alone: the
delivered copy's store timestamp − TIMER_DELIVER_MS). Never negative if nothing is early. Kill -9: timers due 4–14 s
ahead, the broker SIGKILLed 2 s after the last send and restarted at once; every message must still arrive.

Memory: in process, a store plus a ``TimerService`` with ``--pending`` timers one hour ahead read into the wheel;
the process's anonymous RSS (the heap: RssAnon) before and after, and the wheel/log file sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import signal
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from broker.services.timer import TimerService, TimerSettings  # noqa: E402
from broker.store import MessageStore, PutRequest, StoreConfig  # noqa: E402
from client import ConsumeResult, Message, Producer, PushConsumer  # noqa: E402
from client.errors import MQClientError  # noqa: E402
from protocol.message_ext import MessageExt  # noqa: E402
from protocol.message_properties import encode_properties  # noqa: E402
from tests.servers import Servers, launch  # noqa: E402

TOPIC = "TimerBench"


def now_ms() -> int:
    return int(time.time() * 1000)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


class Recorder:
    def __init__(self) -> None:
        self.arrived: dict[bytes, tuple[int, int, int]] = {}  # body -> (arrival ms, store ts, deliver ms)

    def __call__(self, msgs: list[MessageExt]) -> ConsumeResult:
        t = now_ms()
        for m in msgs:
            deliver = int(m.properties.get("TIMER_DELIVER_MS", "0"))
            self.arrived.setdefault(m.body, (t, m.store_timestamp, deliver))
        return ConsumeResult.SUCCESS


async def _producer_ready(ns: str) -> Producer:
    p = Producer("PG_timer_bench", namesrv_addr=ns, send_timeout_ms=5000)
    await p.start()
    for _ in range(100):
        try:
            await p.send(Message(TOPIC, b"warm"))
            return p
        except MQClientError:
            await asyncio.sleep(0.1)
    raise RuntimeError("no route to the bench topic")


async def _send_spread(p: Producer, prefix: str, n: int, delay_ms: int, spread_s: float) -> list[bytes]:
    bodies = []
    for i in range(n):
        body = f"{prefix}-{i}".encode()
        await p.send(Message(TOPIC, body, deliver_time_ms=now_ms() + delay_ms))
        bodies.append(body)
        await asyncio.sleep(spread_s / n)
    return bodies


def _report(name: str, rec: Recorder, bodies: list[bytes]) -> None:
    got = [rec.arrived[b] for b in bodies if b in rec.arrived]
    late = [a - d for a, _s, d in got]
    broker_late = [s - d for _a, s, d in got]
    print(
        f"{name:22} n={len(got)}/{len(bodies)}  lateness p50 {pct(late, 50):6.0f} ms  p99 {pct(late, 99):6.0f} ms"
        f"  max {max(late, default=0):6.0f}  min {min(late, default=0):5.0f}"
        f"  | broker only p50 {pct(broker_late, 50):5.0f} p99 {pct(broker_late, 99):5.0f} ms",
        flush=True,
    )


async def accuracy(tmp: Path, precision: int, per_delay: int) -> None:
    s = launch(tmp / "acc", broker_extra=f"timerPrecisionMs={precision}\nautoCreateTopicEnable=true\n")
    try:
        await _accuracy_rounds(s, precision, per_delay)
        await _kill_round(s, per_delay)
    finally:
        for proc in reversed(s.procs):
            proc.stop()


async def _consumer(s: Servers, rec: Recorder) -> PushConsumer:
    c = PushConsumer("CG_timer_bench", namesrv_addr=s.ns_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    c.subscribe(TOPIC, "*", rec)
    await c.start()
    for _ in range(300):  # its queues assigned (and their pulls parked) before anything is due
        if c.assignment:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)
    return c


async def _accuracy_rounds(s: Servers, precision: int, per_delay: int) -> None:
    print(f"timerPrecisionMs={precision}, {per_delay} messages per delay, sent over 5 s")
    rec = Recorder()
    p = await _producer_ready(s.ns_addr)
    c = await _consumer(s, rec)
    try:
        sent = {}
        for delay in (1_000, 10_000, 60_000):
            sent[delay] = await _send_spread(p, f"d{delay}", per_delay, delay, 5.0)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not all(b in rec.arrived for bs in sent.values() for b in bs):
            await asyncio.sleep(0.2)
        for delay, bodies in sent.items():
            _report(f"delay {delay // 1000} s", rec, bodies)
    finally:
        await c.close()
        await p.close()


async def _kill_round(s: Servers, per_delay: int) -> None:
    rec = Recorder()
    p = await _producer_ready(s.ns_addr)
    bodies = []
    for i in range(per_delay):
        body = f"kill-{i}".encode()
        await p.send(Message(TOPIC, body, deliver_time_ms=now_ms() + 4_000 + 10_000 * i // per_delay))
        bodies.append(body)
    await p.close()
    await asyncio.sleep(2)
    broker = s.procs.pop()
    broker.p.send_signal(signal.SIGKILL)
    broker.stop()
    t0 = time.monotonic()
    s.start_broker("broker-after-kill.log")
    print(f"broker SIGKILLed 2 s after the last send, back up in {time.monotonic() - t0:.1f} s")
    c = await _consumer(s, rec)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(b in rec.arrived for b in bodies):
            await asyncio.sleep(0.2)
    finally:
        await c.close()
    _report("across kill -9", rec, bodies)


def _rss_anon_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    return 0


async def memory(tmp: Path, pending: int) -> None:
    root = tmp / "mem"
    store = MessageStore.open(
        StoreConfig(store_path_root_dir=str(root), mapped_file_size_commit_log=256 << 20, message_index_enable=False)
    )
    await store.start()
    timer = TimerService(store, TimerSettings(root_dir=str(root)))
    timer.open()
    body = b"x" * 64
    t0 = time.perf_counter()
    due = now_ms() + 3_600_000
    for i in range(pending):
        props = {"TIMER_DELIVER_MS": str(due + i % 3_000_000), "UNIQ_KEY": f"{i:032X}"}
        topic, qid = timer.divert(TOPIC, i % 4, props)
        await store.put_message(PutRequest(topic, qid, 0, 0, 0, ("10.0.0.1", 1), body, encode_properties(props)))
    store.dispatcher.drain()
    print(f"{pending} timer messages stored in {time.perf_counter() - t0:.1f} s")
    gc.collect()
    before = _rss_anon_kb()
    timer.start()
    t0 = time.perf_counter()
    while timer.enqueue_lag() > 0:
        await asyncio.sleep(0.5)
    took = time.perf_counter() - t0
    gc.collect()
    after = _rss_anon_kb()
    log_bytes = sum(f.stat().st_size for f in (root / "timerlog").iterdir())
    print(
        f"{pending} pending timers enqueued in {took:.1f} s ({pending / took:,.0f}/s): RssAnon {before / 1024:.1f} MiB"
        f" -> {after / 1024:.1f} MiB ({(after - before) / 1024:+.1f} MiB); timing {sum(timer.timing.values())};"
        f" wheel file {(root / 'timerwheel').stat().st_size / 1e6:.1f} MB, timer log {log_bytes / 1e6:.1f} MB",
        flush=True,
    )
    await timer.stop()
    await store.close()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--precision", type=int, default=1000)
    ap.add_argument("--per-delay", type=int, default=50)
    ap.add_argument("--pending", type=int, default=1_000_000)
    ap.add_argument("--only", choices=("accuracy", "memory"), default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if a.only in (None, "accuracy"):
            await accuracy(Path(tmp), a.precision, a.per_delay)
        if a.only in (None, "memory"):
            await memory(Path(tmp), a.pending)


if __name__ == "__main__":
    asyncio.run(main())
