"""What the built-in metrics cost per request, measured in-process (no network, so a shared machine's noise
matters less than in ``e2e_bench.py --metrics-ab``): the counting the request path does (``RpcStats.observe``,
``BrokerStats.on_put`` / ``on_get``, the in-flight middleware) in ns per call, next to the cost of the request it
rides on (one SEND_BATCH_MESSAGE of 32 x 1 KiB put into a real store); and what one scrape costs with many topics
and groups (it runs on the broker's loop).

    .venv/bin/python bench/metrics_bench.py [--topics 100] [--groups 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

try:
    from bench._util import REPO, table
except ImportError:
    from _util import REPO, table  # type: ignore[no-redef]

sys.path.insert(0, str(REPO))


def per_call_ns(fn: object, n: int = 200_000, repeat: int = 5) -> float:
    best = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()  # type: ignore[operator]
        best.append((time.perf_counter_ns() - t0) / n)
    return statistics.median(best)


async def middleware_ns(n: int = 100_000) -> float:
    from broker.services.broker_stats import BrokerStats

    async def handler(ctx: object, cmd: object) -> None:
        return None

    wrapped = BrokerStats().count_pulls(handler)  # type: ignore[arg-type]
    out = []
    for fn in (handler, wrapped):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            await fn(None, None)  # type: ignore[arg-type]
        out.append((time.perf_counter_ns() - t0) / n)
    return out[1] - out[0]


async def batch_put_us(tmp: Path, rounds: int = 300) -> float:
    from broker.store.config import StoreConfig
    from broker.store.message_store import MessageStore
    from broker.store.request import BatchPutRequest
    from protocol.batch import BatchItem

    store = MessageStore.open(StoreConfig(store_path_root_dir=str(tmp / "store"), store_host=("127.0.0.1", 10911)))
    await store.start()
    items = [BatchItem(b"x" * 1024, {}) for _ in range(32)]
    try:
        t0 = time.perf_counter()
        for _ in range(rounds):
            await store.put_messages(BatchPutRequest("BenchT", 0, 0, 0, "127.0.0.1:1", items), wait=True)
        return (time.perf_counter() - t0) / rounds * 1e6
    finally:
        await store.close()


def scrape_ms(topics: int, groups: int) -> tuple[float, int]:
    from prometheus_client import generate_latest

    from broker.config import load_config
    from broker.metrics.exporter import BrokerMetrics
    from broker.services.broker_stats import BrokerStats
    from broker.services.client_registry import ClientRegistry
    from broker.services.consumer_offsets import ConsumerOffsetTable
    from broker.services.long_polling import LongPollingService
    from broker.services.subscription_groups import SubscriptionGroupTable
    from broker.services.topic_config import TopicConfigTable
    from protocol.bodies import TopicConfig

    cfg = load_config(None, {"metricsExporterType": "PROM"})
    with tempfile.TemporaryDirectory() as d:
        stats = BrokerStats()
        tt = TopicConfigTable(d, cfg.identity, cfg.features)
        offsets = ConsumerOffsetTable(d, 5000)
        for t in range(topics):
            tt.put(TopicConfig.with_queues(f"T{t}", 8))
            stats.on_put(f"T{t}", "normal", 32, 32 * 1100)
            for g in range(groups):
                stats.on_get(f"G{g}", f"T{t}", 0, 32, 32 * 1100, 32)
        m = BrokerMetrics(
            cfg,
            stats,
            tt,
            SubscriptionGroupTable(d, auto_create=True),
            offsets,
            ClientRegistry(120_000),
            LongPollingService(),
            lambda: None,
            lambda: (True, ""),
        )
        for code in (10, 11, 310, 320, 36, 34):
            m.observe(code, 0, False, "success", 0.002)
        times = []
        size = 0
        for _ in range(5):
            t0 = time.perf_counter()
            size = len(generate_latest(m.registry))
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times), size


def library_ns() -> tuple[float, float]:
    """What recording through a metrics library would cost per request instead (why we count in plain dicts):
    prometheus_client ``Counter.labels(...).inc()`` and the OpenTelemetry SDK's ``Counter.add(n, attributes)``."""
    from prometheus_client import CollectorRegistry, Counter

    c = Counter("x_total", "x", ["cluster", "node_id", "topic", "message_type"], registry=CollectorRegistry())
    prom = per_call_ns(lambda: c.labels("c", "b", "BenchT", "normal").inc(32), n=100_000)
    try:
        from opentelemetry.sdk.metrics import MeterProvider
    except ImportError:
        return prom, float("nan")
    counter = MeterProvider().get_meter("bench").create_counter("x")
    attrs = {"cluster": "c", "node_id": "b", "topic": "BenchT", "message_type": "normal"}
    otel = per_call_ns(lambda: counter.add(32, attrs), n=100_000)
    return prom, otel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--groups", type=int, default=10)
    a = ap.parse_args()
    from broker.services.broker_stats import BrokerStats
    from protocol.remoting.rpc_stats import RpcStats

    rpc, st = RpcStats(), BrokerStats()
    observe = per_call_ns(lambda: rpc.observe(320, 0, False, "success", 0.0021))
    on_put = per_call_ns(lambda: st.on_put("BenchT", "normal", 32, 32 * 1100))
    on_get = per_call_ns(lambda: st.on_get("G", "BenchT", 3, 32, 32 * 1100, 99))
    mw = asyncio.run(middleware_ns())
    with tempfile.TemporaryDirectory() as d:
        put_us = asyncio.run(batch_put_us(Path(d)))
    always = on_put + mw  # counted with metrics off too (the TPS windows need them)
    only_on = observe
    rows = [
        ("RpcStats.observe (metrics on only)", f"{observe:,.0f} ns"),
        ("BrokerStats.on_put (always)", f"{on_put:,.0f} ns"),
        ("BrokerStats.on_get (always)", f"{on_get:,.0f} ns"),
        ("in-flight middleware (always)", f"{mw:,.0f} ns"),
        ("store put of a 32 x 1 KiB batch", f"{put_us:,.1f} us"),
        ("send path: counting always / batch put", f"{always / 10 / put_us:.3f} %"),
        ("send path: metrics on extra / batch put", f"{only_on / 10 / put_us:.3f} %"),
    ]
    prom, otel = library_ns()
    rows += [
        ("instead: prometheus_client labels().inc()", f"{prom:,.0f} ns"),
        ("instead: OpenTelemetry SDK counter.add()", f"{otel:,.0f} ns"),
    ]
    table(rows, ("what", "cost"))
    ms, size = scrape_ms(a.topics, a.groups)
    print(f"one scrape with {a.topics} topics x {a.groups} groups: {ms:.1f} ms, {size:,} bytes of text")


if __name__ == "__main__":
    main()
