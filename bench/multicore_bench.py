"""More than one core (issue #21): end-to-end throughput with 1 vs 2 broker processes on one host.

A broker is one Python process whose event loop holds the GIL for nearly all of its work, so it uses at most one
core. rocketq uses a host's cores the way RocketMQ deployments do: several broker processes per host, each its own
broker name (broker-a, broker-b) in one cluster, one name server; a topic created on both has queues on both and
every client spreads its sends and pulls over all of them (README, "Using more than one core").

Each round starts a name server and ``B`` brokers (separate processes, async flush, fresh stores), creates one topic
with ``--queues`` queues in total (split evenly over the brokers), then runs the workload of ``bench/e2e_bench.py``
from ``--producers`` producer processes (batches of 32, 4 in flight each) and then ``--consumers`` push-consumer
processes of one group until every message is consumed. Rounds alternate 1 and 2 brokers; medians and the 2/1 ratio
are printed. Client processes share the machine with the brokers, so on a 2-core host the ratio is bounded by the
clients' own CPU too; compare on the same host only.

    .venv/bin/python bench/multicore_bench.py [--n 200000] [--rounds 3] [--producers 2] [--consumers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    from bench._util import REPO, cpu_seconds, free_port, start_namesrv, table, wait_port
except ImportError:  # run as a script from bench/
    from _util import REPO, cpu_seconds, free_port, start_namesrv, table, wait_port  # type: ignore[no-redef]

sys.path.insert(0, str(REPO))

TOPIC = "MultiCoreBench"


def start_cluster(tmp: Path, brokers: int) -> tuple[list[subprocess.Popen[bytes]], str, list[str]]:
    """A name server and ``brokers`` brokers named broker-a, broker-b, ... in DefaultCluster."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    quiet = subprocess.DEVNULL
    procs: list[subprocess.Popen[bytes]] = []
    deadline = time.monotonic() + 30
    ns = start_namesrv(tmp, procs, deadline)
    addrs = []
    for i in range(brokers):
        name = f"broker-{chr(ord('a') + i)}"
        port = free_port()
        conf = tmp / f"{name}.conf"
        conf.write_text(
            f"brokerClusterName=DefaultCluster\nbrokerName={name}\nlistenPort={port}\nhaListenPort={free_port()}\n"
            f"brokerIP1=127.0.0.1\nstorePathRootDir={tmp}/store-{name}\nflushDiskType=ASYNC_FLUSH\n"
            f"autoCreateTopicEnable=false\nlogDir={tmp}/logs-{name}\n"
        )
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "broker", "-n", ns, "-c", str(conf)],
                env=env,
                stdout=quiet,
                stderr=quiet,
            )
        )
        addrs.append(f"127.0.0.1:{port}")
    for addr in addrs:
        wait_port(int(addr.rsplit(":", 1)[1]), deadline)
    return procs, ns, addrs


async def _create_topic(ns: str, brokers: list[str], queues: int) -> None:
    from client.admin.admin_client import AdminClient
    from protocol.errors import TopicNotExistError

    per = max(1, queues // len(brokers))
    async with AdminClient(ns) as admin:
        for addr in brokers:
            await admin.create_topic(addr, TOPIC, per, per, 6, False)
        deadline = time.monotonic() + 30
        while True:  # every broker's queues in the route before the clients start
            try:
                route, _raw = await admin.topic_route(TOPIC)
            except TopicNotExistError:  # not registered yet
                pass
            else:
                if len({q.broker_name for q in route.queues}) == len(brokers):
                    return
            if time.monotonic() > deadline:
                raise RuntimeError("topic not routed on every broker")
            await asyncio.sleep(0.1)


async def _produce(ns: str, n: int, size: int, batch: int) -> None:
    from client import Message, Producer

    body = b"x" * size
    async with Producer("mc_bench_pg", namesrv_addr=ns) as p:
        sent = 0
        window: list[asyncio.Future[object]] = []
        while sent < n:
            k = min(batch, n - sent)
            window.append(asyncio.ensure_future(p.send_batch([Message(TOPIC, body) for _ in range(k)])))
            sent += k
            if len(window) >= 4:
                await window.pop(0)
        await asyncio.gather(*window)


async def _consume(ns: str, counter: Any, total: int, started: Any) -> None:
    from client import ConsumeResult, PushConsumer

    done = asyncio.Event()

    async def on_msgs(msgs: list[object]) -> ConsumeResult:
        with counter.get_lock():
            counter.value += len(msgs)
            if counter.value >= total:
                done.set()
        return ConsumeResult.SUCCESS

    c = PushConsumer(
        "mc_bench_cg", namesrv_addr=ns, consume_from_where="FIRST_OFFSET", consume_message_batch_max_size=32
    )
    c.subscribe(TOPIC, "*", on_msgs)
    async with c:
        while counter.value < total:
            try:
                await asyncio.wait_for(done.wait(), 0.05)
            except TimeoutError:
                pass


def _runner() -> Any:
    try:
        import uvloop

        return uvloop.run
    except ImportError:
        return asyncio.run


def _producer_main(ns: str, n: int, size: int, batch: int, go: Any) -> None:
    go.wait()
    _runner()(_produce(ns, n, size, batch))


def _consumer_main(ns: str, counter: Any, total: int, started: Any) -> None:
    _runner()(_consume(ns, counter, total, started))


def run_round(brokers: int, a: argparse.Namespace) -> dict[str, float]:
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as d:
        procs, ns, addrs = start_cluster(Path(d), brokers)
        try:
            _runner()(_create_topic(ns, addrs, a.queues))
            go = ctx.Event()
            per = a.n // a.producers
            ps = [ctx.Process(target=_producer_main, args=(ns, per, a.size, 32, go)) for _ in range(a.producers)]
            for p in ps:
                p.start()
            time.sleep(1.0)  # let the producers import and connect; the clock starts at go
            cpu0 = [cpu_seconds(p.pid) for p in procs[1:]]
            t_start = t0 = time.perf_counter()
            go.set()
            for p in ps:
                p.join()
            produce_s = time.perf_counter() - t0
            total = per * a.producers
            counter = ctx.Value("q", 0)
            started = ctx.Event()
            cs = [ctx.Process(target=_consumer_main, args=(ns, counter, total, started)) for _ in range(a.consumers)]
            t0 = time.perf_counter()
            started.set()
            for c in cs:
                c.start()
            deadline = time.monotonic() + 600
            while counter.value < total and time.monotonic() < deadline:
                time.sleep(0.01)
            consume_s = time.perf_counter() - t0
            wall = time.perf_counter() - t_start
            busiest = max(cpu_seconds(p.pid) - c0 for p, c0 in zip(procs[1:], cpu0, strict=True)) / wall
            for c in cs:
                c.join(60)
        finally:
            for proc in reversed(procs):
                proc.terminate()
                proc.wait(60)
    return {
        "produce": total / produce_s,
        "consume": total / consume_s,
        "total": total / (produce_s + consume_s),
        "busiest_broker_cpu": busiest,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--queues", type=int, default=8, help="queues of the topic in total, split over the brokers")
    ap.add_argument("--producers", type=int, default=2)
    ap.add_argument("--consumers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    results: dict[int, list[dict[str, float]]] = {1: [], 2: []}
    for r in range(a.rounds):
        for b in (1, 2) if r % 2 == 0 else (2, 1):
            res = run_round(b, a)
            results[b].append(res)
            print(f"round {r + 1}, {b} broker(s): " + ", ".join(f"{k}={v:,.2f}" for k, v in res.items()), flush=True)
    med = {b: {k: statistics.median(x[k] for x in runs) for k in runs[0]} for b, runs in results.items()}
    keys = ("produce", "consume", "total")
    rows = [
        (f"{b} broker process(es)", *(f"{med[b][k]:,.0f}" for k in keys), f"{med[b]['busiest_broker_cpu']:.0%}")
        for b in (1, 2)
    ]
    rows.append(("ratio 2 / 1", *(f"{med[2][k] / med[1][k]:.2f}" for k in keys), ""))
    print(
        f"multicore: N={a.n}, {a.size} B, {a.queues} queues, {a.producers} producer / {a.consumers} consumer "
        f"processes, {os.cpu_count()} CPUs, median of {a.rounds}"
    )
    table(rows, ("setup", "produce msgs/s", "consume msgs/s", "total msgs/s", "busiest broker, CPU of one core"))


if __name__ == "__main__":
    main()
