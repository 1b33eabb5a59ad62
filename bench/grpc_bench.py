"""RocketMQ 5 gRPC endpoint vs our native SDK, same run, same broker (``mqbroker --enable-proxy``): throughput and
latency of one producer sending N messages of ``--size`` bytes one at a time (each send awaited, as the 5.x Python
Producer only sends singly) while one consumer drains them.

* 5.x: the official ``rocketmq-python-client`` Producer → SimpleConsumer (receive 32, ack each) in a thread;
* native: our asyncio ``Producer.send`` → ``PushConsumer`` (remoting, pull + long polling).

Reported per client: send throughput (msg/s), send latency p50/p99 (ms), end-to-end latency p50/p99 (ms, consume
time − born timestamp: includes queueing behind the producer), and the drain throughput. The broker and name server
are separate processes with async flush.

    .venv/bin/python bench/grpc_bench.py [--n 5000] [--size 1024]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

try:
    from bench._util import REPO, free_port, table, wait_port
except ImportError:
    from _util import REPO, free_port, table, wait_port  # type: ignore[no-redef]

sys.path.insert(0, str(REPO))


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _rates(n: int, lat: list[float], e2e: list[float], send_s: float, total_s: float) -> dict[str, float]:
    """One run's row: send rate, send and end-to-end latency percentiles (ms), drain rate."""
    return {
        "send/s": n / send_s,
        "send p50": pct(lat, 0.5),
        "send p99": pct(lat, 0.99),
        "e2e p50": pct(e2e, 0.5),
        "e2e p99": pct(e2e, 0.99),
        "drain/s": n / total_s,
    }


def start(tmp: Path) -> tuple[list[subprocess.Popen[bytes]], str, str, str]:
    ns_port, br_port, grpc_port = free_port(), free_port(), free_port()
    (tmp / "namesrv.conf").write_text(f"listenPort={ns_port}\nkvConfigPath={tmp}/kv.json\n")
    (tmp / "broker.conf").write_text(
        f"listenPort={br_port}\nbrokerIP1=127.0.0.1\nstorePathRootDir={tmp}/store\nflushDiskType=ASYNC_FLUSH\n"
        f"grpcServerPort={grpc_port}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    q = subprocess.DEVNULL
    ns = subprocess.Popen(
        [sys.executable, "-m", "namesrv", "-c", str(tmp / "namesrv.conf")], env=env, stdout=q, stderr=q
    )
    br = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "broker",
            "-n",
            f"127.0.0.1:{ns_port}",
            "-c",
            str(tmp / "broker.conf"),
            "--enable-proxy",
        ],
        env=env,
        stdout=q,
        stderr=q,
    )
    deadline = time.monotonic() + 30
    for port in (ns_port, br_port, grpc_port):
        wait_port(port, deadline)
    return [br, ns], f"127.0.0.1:{ns_port}", f"127.0.0.1:{br_port}", f"127.0.0.1:{grpc_port}"


async def create_topic(ns: str, broker: str, topic: str) -> None:
    from client.admin.admin_client import AdminClient

    async with AdminClient(ns) as a:
        await a.create_topic(broker, topic, 8, 8, 6, False)


def bench_5x(endpoint: str, topic: str, n: int, size: int) -> dict[str, float]:
    from rocketmq.v5.client import ClientConfiguration, Credentials
    from rocketmq.v5.consumer import SimpleConsumer
    from rocketmq.v5.model import FilterExpression, Message
    from rocketmq.v5.producer import Producer

    cfg = ClientConfiguration(endpoint, Credentials("", ""))
    consumer = SimpleConsumer(cfg, "GID_bench_5x", {topic: FilterExpression()}, await_duration=5)
    consumer.startup()
    e2e: list[float] = []
    done = threading.Event()

    def drain() -> None:
        while len(e2e) < n:
            for m in consumer.receive(32, 30):
                e2e.append(time.time() * 1000 - m.born_timestamp)
                consumer.ack(m)  # one ack RPC per message: the 5.x Python client's receive/ack shape
        done.set()

    producer = Producer(cfg, (topic,))
    producer.startup()
    time.sleep(1.5)  # bench only: let the consumer's settings reach the broker (its pop offsets start at the end)
    t = threading.Thread(target=drain, daemon=True)
    t.start()
    body = b"x" * size
    lat: list[float] = []
    t0 = time.perf_counter()
    for i in range(n):
        m = Message()
        m.topic, m.body, m.tag, m.keys = topic, body, "bench", f"k{i}"
        s = time.perf_counter()
        producer.send(m)
        lat.append((time.perf_counter() - s) * 1000)
    send_s = time.perf_counter() - t0
    done.wait(600)
    total_s = time.perf_counter() - t0
    producer.shutdown()
    consumer.shutdown()
    return _rates(n, lat, e2e, send_s, total_s)


async def bench_native(ns: str, topic: str, n: int, size: int) -> dict[str, float]:
    from client import ConsumeResult, Message, Producer, PushConsumer
    from protocol.message_ext import MessageExt

    e2e: list[float] = []
    done = asyncio.Event()

    async def on_msgs(msgs: list[MessageExt]) -> ConsumeResult:
        now = time.time() * 1000
        e2e.extend(now - m.born_timestamp for m in msgs)
        if len(e2e) >= n:
            done.set()
        return ConsumeResult.SUCCESS

    c = PushConsumer("GID_bench_native", namesrv_addr=ns, consume_from_where="FIRST_OFFSET")
    c.subscribe(topic, "*", on_msgs)
    body = b"x" * size
    lat: list[float] = []
    async with c, Producer("PID_bench_native", namesrv_addr=ns) as p:
        t0 = time.perf_counter()
        for i in range(n):
            s = time.perf_counter()
            await p.send(Message(topic, body, tags="bench", keys=[f"k{i}"]))
            lat.append((time.perf_counter() - s) * 1000)
        send_s = time.perf_counter() - t0
        await asyncio.wait_for(done.wait(), 600)
        total_s = time.perf_counter() - t0
    return _rates(n, lat, e2e, send_s, total_s)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--size", type=int, default=1024)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="rocketq-grpc-bench-") as d:
        procs, ns, broker, endpoint = start(Path(d))
        try:
            asyncio.run(create_topic(ns, broker, "BenchGrpc"))
            asyncio.run(create_topic(ns, broker, "BenchNative"))
            results: dict[str, dict[str, Any]] = {
                "5.x gRPC (official Python)": bench_5x(endpoint, "BenchGrpc", a.n, a.size),
                "native SDK (remoting)": asyncio.run(bench_native(ns, "BenchNative", a.n, a.size)),
            }
        finally:
            for p in procs:
                p.terminate()
                p.wait(30)
    keys = ("send/s", "send p50", "send p99", "e2e p50", "e2e p99", "drain/s")
    print(f"\n{a.n} messages of {a.size} B, one producer (sends awaited one by one) and one consumer; latencies in ms")
    table(
        [(name, *(f"{r[k]:.1f}" for k in keys)) for name, r in results.items()],
        ("client", *keys),
    )


if __name__ == "__main__":
    main()
