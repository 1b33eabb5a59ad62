"""Latency and per-send throughput side by side with Redis Streams and NATS JetStream (issue 21's tables).

One invocation measures every system, the order rotating each round, and prints the median of ``--runs`` rounds of
each figure with the ratios of medians (rocketq / Redis, rocketq / NATS: > 1 is better for msgs/s, worse for
latency). 1 KiB messages, Python clients on every side (``bench/_systems.py``: servers, clients, durability modes):

- workload B: a producer process paced at a fixed rate (1k / 5k / 20k msgs/s by default) for ``--secs``, a consumer
  process subscribed from before the first send; latency = the consumer's receive time - the CLOCK_MONOTONIC send time
  carried in the body: p50 / p99 / p99.9 / max. A rate is *held* when the producer kept it and every message arrived.
  Behind schedule, the producer sends the messages due in one batch (as the anchors do). Then the highest rate held
  with p99 < 10 ms: a ladder up to the first miss, then ``--bisect`` halvings (one search per system, not a median).
- single send, one in flight: msgs/s of sends each awaiting the broker's reply, and where the round trip's CPU goes:
  user + system CPU time per send of the client process and of the server processes (``/proc``), in the same run.
- 32 concurrent single sends (32 tasks, each awaiting its send), with fsync before the reply (rocketq SYNC_FLUSH,
  Redis ``appendfsync always``, NATS ``sync_interval: always``) and without (ASYNC_FLUSH, ``everysec``, default);
  for rocketq once more with ``groupCommitInline`` (the fsync on the event loop, as Redis's ``always`` does it),
  its ratios against the anchors' fsync figures.
- the floor beside the others, column "Python floor": the same single, 32-concurrent and B runs against a bare
  Python relay (``bench/_floor.py``): Python on both ends, no work on either, nothing stored; no Python server can
  answer a send or deliver a message faster.
- rocketq twice: ``rocketq`` is the mypyc-compiled build of this checkout (``make compile``; skipped without one) and
  ``rocketq-pure`` the same source with ``ROCKETQ_PURE=1`` in its servers' environment (``protocol/build.py``); the
  ratios are rocketq's (compiled) against each other system, ``rocketq-pure`` included.
- Apache RocketMQ 5.5.0 (``apache``, from ``make peers``) beside rocketq, driven by the same Python client over
  remoting; each JVM with a fixed 512 MiB heap (``bench/_systems.py`` APACHE_JVM_OPTS). ``--warm`` first gives its
  JVMs a minute (``--warm SECS``) of 32-concurrent sends, so the JIT has compiled the hot paths before anything is
  measured, on every fresh start (async and fsync servers, the search).
- gRPC rows (``grpc``): the Java 5.x client (rocketmq-client-java 5.0.8, ``tests/reference/java5``'s driver,
  command ``bench``) against Apache RocketMQ's proxy (cluster mode) and against rocketq's gRPC endpoint
  (``enableProxy``): msgs/s and latency of sends each awaited, 1 thread and 32 threads.
- every table has each server's RSS (``/proc/PID/status`` VmRSS at the end of the round's async runs, MiB): the
  broker (an anchor's one process), the name server, Apache's proxy, each on its own row.
- workload A: batches of 32 with 1 and 4 batches in flight: produce then consume msgs/s, and total = N / both phases
  (rocketq: SEND_BATCH_MESSAGE, then a push consumer pulling 32 and handing over up to 32 at a time; Redis: pipelines
  of 32 XADD; NATS: 32 ``publish_async`` then their acks). With 1 in flight rocketq and Redis send through their
  synchronous clients.

    .venv/bin/python bench/latency_bench.py            # quick: 3 rounds, 3 s per rate, N = 20k for A (~10 min)
    .venv/bin/python bench/latency_bench.py --full     # issue 21's sizes: 10 s per rate, N = 200k for A
    .venv/bin/python bench/latency_bench.py --only b --rates 5000 --systems rocketq,redis
    .venv/bin/python bench/latency_bench.py --trace    # one message's hops through rocketq (bench/_trace.py)
    .venv/bin/python bench/latency_bench.py --trace --trace-procs 2   # the same, the producer in a child (B's shape)
    .venv/bin/python bench/latency_bench.py --systems rocketq,apache --only single,conc,grpc --warm

Needs ``make bench-setup`` for Redis and NATS, ``make peers`` for Apache RocketMQ and the Java 5.x client; a system
that cannot run here is skipped with a line.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import queue
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

try:
    from bench import _systems as systems
    from bench._java5 import GRPC_ROWS, Java5
    from bench._util import REPO, cpu_seconds, due, highest_rate, latency_summary, median_of, next_due_in, ratio, table
except ImportError:
    import _systems as systems  # type: ignore[no-redef]
    from _java5 import GRPC_ROWS, Java5  # type: ignore[no-redef]
    from _util import REPO, cpu_seconds, due, highest_rate, latency_summary, median_of, next_due_in, ratio, table  # type: ignore[no-redef]

sys.path.insert(0, str(REPO))

CTX = mp.get_context("fork")  # children start no interpreter and import nothing: the parent runs no event loop
P99_TARGET_MS = 10.0
HIGHEST = f"B highest rate held with p99 < {P99_TARGET_MS:g} ms (msgs/s)"
FSYNC_ROW = "32 concurrent sends, fsync (msgs/s)"
# rocketq only: SYNC_FLUSH with groupCommitInline; its ratios are against the anchors' fsync figures
INLINE_ROW = "32 concurrent sends, fsync, rocketq groupCommitInline (msgs/s)"
SINGLE_CLIENT_ROW = "single send, client CPU per send (µs)"
SINGLE_SERVER_ROW = "single send, server CPU per send (µs)"
MAX_CATCHUP = 128  # messages due at once beyond this go out in several batches
RSS_ROLES = ("broker", "name server", "proxy")


def _runner() -> Callable[[Coroutine[Any, Any, Any]], Any]:
    try:
        import uvloop

        return uvloop.run
    except ImportError:
        return asyncio.run


_seq = [0]


def new_topic(kind: str) -> str:
    _seq[0] += 1
    return f"Lat{kind}{os.getpid()}x{_seq[0]}"


# -- what runs in the child processes ------------------------------------------------------------------------------


async def lat_consumer(system: str, addr: str, topic: str, total: int, max_s: float, ready: Any) -> dict[str, Any]:
    """Subscribe, see a warm-up message arrive (the subscription is live), tell ``ready``, then time ``total``."""
    c = systems.make_client(system, addr, topic)
    await c.open()
    await c.create()
    lats: list[int] = []
    done, warm = asyncio.Event(), asyncio.Event()

    def on_bodies(bs: list[bytes]) -> None:
        now = time.monotonic_ns()
        for b in bs:
            ts = systems.sent_ns(b)
            if ts == 0:
                warm.set()
            else:
                lats.append(now - ts)
        if len(lats) >= total:
            done.set()

    task = asyncio.ensure_future(c.consume(on_bodies, done))
    await c.send(systems.WARM)
    await asyncio.wait_for(warm.wait(), 120)
    ready.set()
    try:
        await asyncio.wait_for(done.wait(), max_s)
    except TimeoutError:
        done.set()
    await task
    await c.close()
    return {"received": len(lats), **latency_summary(lats)}


async def paced_producer(system: str, addr: str, topic: str, rate: int, secs: float, size: int) -> dict[str, Any]:
    """Send ``rate * secs`` messages on schedule, each awaited; late messages go out together in one batch."""
    c = systems.make_client(system, addr, topic, one_in_flight=True)
    await c.open()
    total = int(rate * secs)
    sent = catchups = failed = 0
    error = ""
    t0 = time.perf_counter()
    limit = 2 * secs + 5  # give up this far behind: the rate is not held anyway
    while sent < total:
        el = time.perf_counter() - t0
        if el > limit:
            break
        k = min(due(el, rate, total) - sent, MAX_CATCHUP)
        try:
            if k == 1:
                await c.send(systems.body(size, time.monotonic_ns()))
            else:
                catchups += 1
                await c.send_batch([systems.body(size, time.monotonic_ns()) for _ in range(k)])
        except Exception as exc:  # a send timing out under overload: the rate is not held, the run goes on
            failed += k
            error = f"{type(exc).__name__}: {exc}"
        sent += k
        wait = next_due_in(sent, rate, time.perf_counter() - t0)
        if wait > 0:
            time.sleep(wait)  # µs resolution (the loop's timers have 1 ms); nothing else runs in this process
    el = time.perf_counter() - t0
    await c.close()
    return {
        "total": total,
        "sent": sent - failed,
        "achieved": (sent - failed) / el,
        "catchups": catchups,
        "error": error,
    }


async def sends(
    system: str, addr: str, topic: str, n: int, window: int, size: int, pids: tuple[int, ...] = ()
) -> dict[str, Any]:
    """``window`` tasks each sending one message at a time until ``n`` are acknowledged: msgs/s, and the CPU time
    per send of this client process and of the server processes ``pids`` (µs; user + system)."""
    c = systems.make_client(system, addr, topic, one_in_flight=window == 1)
    await c.open()
    await c.create()
    b = systems.body(size, 1)
    for _ in range(20):  # connections and routes warm
        await c.send(b)
    left = [n]

    async def worker() -> None:
        while left[0] > 0:
            left[0] -= 1
            await c.send(b)

    server0, mine0 = sum(map(cpu_seconds, pids)), time.process_time()
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(window)))
    el = time.perf_counter() - t0
    client_us, server_us = (time.process_time() - mine0) / n * 1e6, (sum(map(cpu_seconds, pids)) - server0) / n * 1e6
    await c.close()
    return {"msgs_s": n / el, "client_us": client_us, "server_us": server_us}


async def warm_up(system: str, addr: str, topic: str, secs: float, size: int) -> dict[str, Any]:
    """32 concurrent sends for ``secs`` (``--warm``): a JVM's JIT compiles its hot paths before anything counts."""
    c = systems.make_client(system, addr, topic)
    await c.open()
    await c.create()
    b = systems.body(size, 1)
    end = time.monotonic() + secs
    n = [0]

    async def worker() -> None:
        while time.monotonic() < end:
            await c.send(b)
            n[0] += 1

    await asyncio.gather(*(worker() for _ in range(32)))
    await c.close()
    return {"sent": n[0]}


async def make_topic(system: str, addr: str, topic: str) -> dict[str, Any]:
    """The topic exists and the name server routes it (for a client that needs a route before its first send)."""
    c = systems.make_client(system, addr, topic)
    await c.open()
    await c.create()
    await c.close()
    return {}


async def batches(system: str, addr: str, topic: str, n: int, size: int, in_flight: int) -> dict[str, Any]:
    """Workload A: ``n`` messages in batches of 32 (``in_flight`` outstanding), then consume them all. With one
    batch in flight each system sends through its synchronous client where it has one (redis-py's ``Redis``,
    rocketq's ``client.sync``), as single sends do."""
    c = systems.make_client(system, addr, topic, one_in_flight=in_flight == 1)
    await c.open()
    await c.create()
    b = systems.body(size, 1)
    t0 = time.perf_counter()
    window: list[asyncio.Future[None]] = []
    sent = 0
    while sent < n:
        k = min(32, n - sent)
        window.append(asyncio.ensure_future(c.send_batch([b] * k)))
        sent += k
        if len(window) >= in_flight:
            await window.pop(0)
    await asyncio.gather(*window)
    produce_s = time.perf_counter() - t0
    got = [0]
    done = asyncio.Event()

    def on_bodies(bs: list[bytes]) -> None:
        got[0] += len(bs)
        if got[0] >= n:
            done.set()

    t0 = time.perf_counter()
    await asyncio.wait_for(c.consume(on_bodies, done), 600)
    consume_s = time.perf_counter() - t0
    await c.close()
    return {"produce": n / produce_s, "consume": n / consume_s, "total": n / (produce_s + consume_s)}


def _child(q: Any, fn: Callable[..., Coroutine[Any, Any, Any]], args: tuple[Any, ...]) -> None:
    try:
        q.put(("ok", _runner()(fn(*args))))
    except BaseException as exc:
        q.put(("error", f"{type(exc).__name__}: {exc}"))


def start_child(fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> tuple[Any, Any]:
    q = CTX.Queue()
    p = CTX.Process(target=_child, args=(q, fn, args), daemon=True)
    p.start()
    return p, q


def result_of(p: Any, q: Any, timeout: float) -> dict[str, Any] | None:
    try:
        status, val = q.get(timeout=timeout)
    except queue.Empty:
        status, val = "error", f"no result in {timeout:.0f} s"
    p.join(10)
    if p.is_alive():
        p.kill()
        p.join()
    if status != "ok":
        print(f"    failed: {val}", flush=True)
        return None
    return dict(val)


def in_child(fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any, timeout: float = 900) -> dict[str, Any] | None:
    """Run ``fn(*args)`` on a fresh event loop in a child process; its result, or None (printed) when it failed."""
    return result_of(*start_child(fn, *args), timeout=timeout)


# -- scenarios (parent side) ---------------------------------------------------------------------------------------


def run_b(system: str, addr: str, rate: int, secs: float, size: int) -> dict[str, Any] | None:
    topic = new_topic("B")
    total = int(rate * secs)
    max_s = 2 * secs + 15
    ready = CTX.Event()
    cons = start_child(lat_consumer, system, addr, topic, total, max_s, ready)
    if not ready.wait(150):
        result_of(*cons, timeout=1)
        print("    failed: the consumer never saw its warm-up message", flush=True)
        return None
    prod = in_child(paced_producer, system, addr, topic, rate, secs, size, timeout=max_s + 60)
    got = result_of(*cons, timeout=max_s + 60)
    if prod is None or got is None:
        return None
    held = prod["sent"] == total and got["received"] == total and prod["achieved"] >= 0.97 * rate
    return {**prod, **got, "held": held}


def b_ok(res: dict[str, Any] | None) -> bool:
    return bool(res and res["held"] and res["p99_ms"] is not None and res["p99_ms"] < P99_TARGET_MS)


def search(system: str, addr: str, secs: float, size: int, bisect: int, ladder: list[int]) -> int | None:
    """The highest rate held with p99 < 10 ms on ``system`` (``highest_rate``'s ladder, then bisection)."""

    def holds(rate: int) -> bool:
        res = run_b(system, addr, rate, secs, size)
        _print_b(f"search {system}", rate, res)
        return b_ok(res)

    return highest_rate(holds, ladder, bisect)


def _f(v: float | None, unit: str = "") -> str:
    if v is None:
        return "—"
    if unit == "ms":
        return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:,.0f}"
    return f"{v:,.0f}"


def _print_b(what: str, rate: int, res: dict[str, Any] | None) -> None:
    if res is None:
        return
    print(
        f"  {what} B {rate}/s: sent {res['sent']}/{res['total']} at {res['achieved']:,.0f}/s "
        f"({res['catchups']} catch-ups), received {res['received']}, p50 {_f(res['p50_ms'], 'ms')} "
        f"p99 {_f(res['p99_ms'], 'ms')} p99.9 {_f(res['p999_ms'], 'ms')} max {_f(res['max_ms'], 'ms')} ms"
        f"{'' if res['held'] else '  NOT HELD'}{'  (' + res['error'] + ')' if res['error'] else ''}",
        flush=True,
    )


_B_ROWS = (
    ("p50_ms", "p50 (ms)"),
    ("p99_ms", "p99 (ms)"),
    ("p999_ms", "p99.9 (ms)"),
    ("max_ms", "max (ms)"),
    ("achieved", "achieved (msgs/s)"),
)
Figures = dict[tuple[str, str], list[float | None]]  # (row, system) -> one figure per round


def warm_jvm(system: str, served: systems.Served, a: argparse.Namespace) -> None:
    """``--warm``: a JVM system's servers get ``a.warm`` seconds of sends before anything is measured."""
    if a.warm and system in systems.JVM:
        res = in_child(warm_up, system, served.addr, new_topic("W"), a.warm, a.size, timeout=a.warm + 300)
        print(f"  {system} warmed for {a.warm:g} s: {res['sent'] if res else '?'} sends", flush=True)


def grpc_rows(system: str, served: systems.Served, a: argparse.Namespace, put: Callable[[str, Any], None]) -> None:
    """The Java 5.x client's sends over gRPC, 1 and 32 threads (``GRPC_ROWS``)."""
    from tests.reference.peers import wait_route

    topic = new_topic("G")
    in_child(make_topic, system, served.addr, topic)
    wait_route(served.addr, topic)
    results = {}
    for threads in sorted({t for _, t, _ in GRPC_ROWS}):
        n = a.n_single if threads == 1 else a.n_conc
        warm_ms = int(a.warm * 1000) if threads == 1 else 0
        results[threads] = Java5.bench(served.grpc, topic, threads, n, a.size, warm_ms)
        res = results[threads]
        print(
            f"  {system} gRPC Java 5.x, {threads} thread(s): {_f(res['msgsPerSec'] if res else None)} msgs/s, p50 "
            f"{_f(res['p50Ms'] if res else None, 'ms')} p99 {_f(res['p99Ms'] if res else None, 'ms')} ms",
            flush=True,
        )
    for row, threads, key in GRPC_ROWS:
        res = results[threads]
        put(row, res[key] if res else None)


def round_for(system: str, a: argparse.Namespace, figs: Figures) -> None:
    """Every scenario of one round on ``system``: async durability, then fsync before ack; then its servers' RSS."""

    def put(row: str, v: float | None) -> None:
        figs.setdefault((row, system), []).append(v)

    only = set(a.only.split(","))
    if system in systems.NO_STORE:
        only -= {"a"}
    if system not in systems.GRPC:
        only -= {"grpc"}
    grpc = "grpc" in only
    with tempfile.TemporaryDirectory() as d, systems.servers(system, "async", Path(d), grpc) as served:
        addr = served.addr
        warm_jvm(system, served, a)
        if grpc:
            grpc_rows(system, served, a, put)
        if "b" in only:
            for rate in a.rate_list:
                res = run_b(system, addr, rate, a.secs, a.size)
                _print_b(system, rate, res)
                for key, name in _B_ROWS:
                    put(f"B {rate}/s {name}", res[key] if res else None)
                put(f"B {rate}/s held (runs)", 1.0 if res and res["held"] else 0.0)
        if "single" in only:
            res = in_child(sends, system, addr, new_topic("S"), a.n_single, 1, a.size, served.pids)
            put("single send, 1 in flight (msgs/s)", res["msgs_s"] if res else None)
            put(SINGLE_CLIENT_ROW, res["client_us"] if res else None)
            put(SINGLE_SERVER_ROW, res["server_us"] if res else None)
            print(
                f"  {system} single send: {_f(res['msgs_s'] if res else None)} msgs/s, CPU per send: client "
                f"{_f(res['client_us'] if res else None)} µs, server {_f(res['server_us'] if res else None)} µs",
                flush=True,
            )
        if "conc" in only:
            res = in_child(sends, system, addr, new_topic("C"), a.n_conc, 32, a.size)
            put("32 concurrent sends, no fsync (msgs/s)", res["msgs_s"] if res else None)
            print(f"  {system} 32 concurrent, no fsync: {_f(res['msgs_s'] if res else None)} msgs/s", flush=True)
        if "a" in only:
            for depth in (1, 4):
                res = in_child(batches, system, addr, new_topic("A"), a.n_a, a.size, depth)
                for key in ("produce", "consume", "total"):
                    put(f"A: batches of 32, {depth} in flight, {key} (msgs/s)", res[key] if res else None)
                if res:
                    print(
                        f"  {system} A {depth} in flight: produce {_f(res['produce'])}, consume "
                        f"{_f(res['consume'])}, total {_f(res['total'])} msgs/s",
                        flush=True,
                    )
        rss = dict(zip(served.roles, map(systems.rss_mib, served.pids), strict=True))
        for role in RSS_ROLES:
            put(f"RSS {role}, end of round (MiB)", rss.get(role))
        print(f"  {system} RSS: " + ", ".join(f"{r} {_f(v)} MiB" for r, v in rss.items()), flush=True)
    fsync_runs = []  # (durability, row, label, topic kind): fresh servers for each
    if "conc" in only and system not in systems.NO_STORE:
        fsync_runs.append(("sync", FSYNC_ROW, "fsync", "F"))
    if "conc" in only and system == "rocketq":  # the fsync on the event loop, as Redis's `always` does it
        fsync_runs.append(("sync-inline", INLINE_ROW, "fsync inline", "I"))
    for durability, row, label, kind in fsync_runs:
        with tempfile.TemporaryDirectory() as d, systems.servers(system, durability, Path(d)) as served:
            warm_jvm(system, served, a)
            res = in_child(sends, system, served.addr, new_topic(kind), a.n_conc, 32, a.size)
            put(row, res["msgs_s"] if res else None)
            print(f"  {system} 32 concurrent, {label}: {_f(res['msgs_s'] if res else None)} msgs/s", flush=True)


def report(a: argparse.Namespace, sys_list: list[str], figs: Figures) -> None:
    rows: list[tuple[str, ...]] = []
    for row in dict.fromkeys(r for r, _ in figs):
        runs = {s: figs.get((row, s)) for s in sys_list}
        if row.endswith("held (runs)"):
            cells = [f"{sum(1 for v in f if v)}/{len(f)}" if f else "—" for f in runs.values()]
            rows.append((row, *cells, *([""] * (len(sys_list) - 1))))
            continue
        med = {s: median_of(f or []) for s, f in runs.items()}
        if row == INLINE_ROW:  # the anchors' cells stay empty; the ratios are against their fsync figures
            anchors = {s: median_of(figs.get((FSYNC_ROW, s)) or []) for s in sys_list[1:]}
            cells = [_f(med["rocketq"]), *("—" for _ in sys_list[1:])]
            rows.append((row, *cells, *(ratio(med["rocketq"], anchors[s]) for s in sys_list[1:])))
            continue
        if row == HIGHEST:  # one search per system; 0 = below the ladder's first rate
            below = f"< {int(a.search_ladder.split(',')[0]):,}"
            cells = [below if med[s] == 0 else _f(med[s]) for s in sys_list]
            found = {s: (med[s] or None) for s in sys_list}
            rows.append((row, *cells, *(ratio(found["rocketq"], found[s]) for s in sys_list[1:])))
            continue
        unit = "ms" if row.endswith("(ms)") else ""
        rows.append(
            (row, *(_f(med[s], unit) for s in sys_list), *(ratio(med["rocketq"], med[s]) for s in sys_list[1:]))
        )
    header = ("figure (median of rounds)", *(systems.LABEL[s] for s in sys_list))
    header += tuple(f"rocketq / {systems.LABEL[s].split()[0]}" for s in sys_list[1:])
    print()
    print(
        f"{a.runs} rounds, systems alternating; {a.size} B messages; B: {a.secs:g} s per rate; single: {a.n_single}, "
        f"32 concurrent: {a.n_conc}, A: N = {a.n_a}; load average at the end {os.getloadavg()[0]:.2f}"
        + (f"; JVMs warmed {a.warm:g} s" if a.warm else "; JVMs not warmed (--warm)")
    )
    table(rows, header)


def versions() -> str:
    """Interpreter and anchor server versions, and the machine's load now (figures swing with it)."""
    out = [f"Python {sys.version.split()[0]}", f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"]
    for cmd in (["redis-server", "--version"], [systems.nats_server_exe() or "nats-server", "--version"]):
        try:
            out.append(subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip().split(" sha")[0])
        except (OSError, subprocess.SubprocessError):
            pass
    return "; ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="issue 21's sizes: 10 s per rate, N = 200k for A")
    ap.add_argument("--runs", type=int, default=3, help="rounds (each system once per round, order rotating)")
    ap.add_argument("--systems", default=",".join(systems.SYSTEMS))
    ap.add_argument("--only", default="b,single,conc,a,grpc,search", help="scenarios: b,single,conc,a,grpc,search")
    ap.add_argument(
        "--warm",
        type=float,
        nargs="?",
        const=60.0,
        default=0.0,
        help="give a JVM system's servers this many seconds of sends (60 without a value) before measuring",
    )
    ap.add_argument("--rates", default="1000,5000,20000", help="workload B's fixed rates, msgs/s")
    ap.add_argument("--secs", type=float, help="seconds per workload B run (default 3, --full 10)")
    ap.add_argument("--search-secs", type=float, default=2.0, help="seconds per run of the highest-rate search")
    ap.add_argument("--search-ladder", default="1000,2000,5000,10000,20000,40000,80000")
    ap.add_argument("--bisect", type=int, default=2, help="halvings after the ladder's first miss")
    ap.add_argument("--n-single", type=int, help="sends for the single-send figure (default 2000, --full 10000)")
    ap.add_argument("--n-conc", type=int, help="sends for the 32-concurrent figures (default 5000, --full 50000)")
    ap.add_argument("--n-a", type=int, help="workload A's N (default 20000, --full 200000)")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--trace", action="store_true", help="trace messages through rocketq's hops instead")
    ap.add_argument("--trace-count", type=int, default=5)
    ap.add_argument(
        "--trace-procs",
        type=int,
        choices=(1, 2),
        default=1,
        help="2: the traced producer in a child process (B's shape)",
    )
    a = ap.parse_args()
    full = a.full
    a.secs = a.secs or (10.0 if full else 3.0)
    a.n_single = a.n_single or (10_000 if full else 2_000)
    a.n_conc = a.n_conc or (50_000 if full else 5_000)
    a.n_a = a.n_a or (200_000 if full else 20_000)
    a.rate_list = [int(r) for r in a.rates.split(",") if r]
    if a.trace:
        try:
            from bench._trace import trace
        except ImportError:
            from _trace import trace  # type: ignore[no-redef]
        trace(a.trace_count, a.size, _runner(), start_child if a.trace_procs == 2 else None)
        return
    sys_list = []
    for s in a.systems.split(","):
        why = systems.missing(s)
        if why:
            print(f"{systems.LABEL[s]} skipped: {why} (make bench-setup installs it)")
        else:
            sys_list.append(s)
    if "rocketq" not in sys_list:
        sys.exit("rocketq must be one of --systems")
    sys_list = ["rocketq", *[s for s in sys_list if s != "rocketq"]]
    print(versions(), flush=True)
    figs: Figures = {}
    for r in range(a.runs):
        order = sys_list[r % len(sys_list) :] + sys_list[: r % len(sys_list)]
        print(f"round {r + 1}/{a.runs}: {', '.join(order)}", flush=True)
        for system in order:
            round_for(system, a, figs)
    if "search" in a.only.split(","):
        ladder = [int(x) for x in a.search_ladder.split(",")]
        print(f"highest rate held with p99 < {P99_TARGET_MS:g} ms ({a.search_secs:g} s per step):", flush=True)
        for system in sys_list:
            if system in systems.NO_STORE:
                continue
            with tempfile.TemporaryDirectory() as d, systems.servers(system, "async", Path(d)) as served:
                warm_jvm(system, served, a)
                best = search(system, served.addr, a.search_secs, a.size, a.bisect, ladder)
            figs[(HIGHEST, system)] = [float(best) if best else 0.0]  # 0: not even the ladder's first rate
    Java5.close()
    report(a, sys_list, figs)


if __name__ == "__main__":
    main()
