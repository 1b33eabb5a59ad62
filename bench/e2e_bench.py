"""End-to-end throughput: our client and broker vs Redis Streams, same run, same workload (docs/reference/performance.md workload A).

1 producer sends N messages of 1 KiB in batches of 32 (SEND_BATCH_MESSAGE), then 1 push consumer (a consumer group)
reads them all. The broker and name server run as separate processes with async flush. In the same invocation the
Redis Streams anchor (``../shared/bench/anchors/redis_streams.py``: pipelined XADD of 32, XREADGROUP COUNT 32 + XACK)
runs against a loopback redis-server with ``appendfsync everysec`` (durability matched to async flush). Needs
``redis-server`` on PATH and ``redis`` in the venv (``make bench-setup``); without them Redis is skipped with a line.

    .venv/bin/python bench/e2e_bench.py [--n 200000] [--memory]

``--memory`` also measures a push consumer facing a backlog (default 1,000,000 messages with ``--backlog``): its RSS
while the listener is slow, which flow control must keep bounded.

``--metrics-ab R`` measures the cost of the built-in metrics instead: R rounds, each running the workload against
fresh servers with metrics off and then on (``metricsExporterType=PROM``, the order alternating per round), with
``/metrics`` scraped every second while metrics are on (15x Prometheus's default rate); prints every run, the
medians and the difference.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    from bench._util import REPO, cpu_seconds, free_port, run_anchor, table
except ImportError:
    from _util import REPO, cpu_seconds, free_port, run_anchor, table  # type: ignore[no-redef]

sys.path.insert(0, str(REPO))


def start_servers(
    tmp: Path,
    metrics_port: int = 0,
    flush: str = "ASYNC_FLUSH",
    repo: Path = REPO,
    extra: str = "",
    *,
    pure: bool = False,
) -> tuple[list[subprocess.Popen[bytes]], str]:
    """A name server and a broker (``flush``: its flushDiskType; ``extra``: more broker.conf lines) from the checkout
    ``repo`` (this one by default); with ``metrics_port`` the broker serves /metrics. Returns them, the broker first,
    and the name server's address. ``pure``: the servers run the pure-Python source (ROCKETQ_PURE=1) even where the
    checkout has a compiled build (``make compile``).

    Their output goes to ``tmp/namesrv.out`` and ``tmp/broker.out``. A port taken between ``free_port`` choosing it
    and the server binding it (another process on a busy machine) means new ports and another try; any other failed
    start raises with the tail of the server's output."""
    for attempt in range(3):
        try:
            return _start_servers(tmp, metrics_port, flush, repo, extra, pure)
        except _PortTaken:
            if attempt == 2:
                raise RuntimeError("servers did not start: their ports were taken three times") from None
    raise AssertionError("not reached")


class _PortTaken(Exception):
    pass


def _start_servers(
    tmp: Path, metrics_port: int, flush: str, repo: Path, extra: str, pure: bool
) -> tuple[list[subprocess.Popen[bytes]], str]:
    ns_port, br_port = free_port(), free_port()
    (tmp / "namesrv.conf").write_text(f"listenPort={ns_port}\nkvConfigPath={tmp}/kv.json\nlogDir={tmp}/logs\n")
    metrics = (
        f"metricsExporterType=PROM\nmetricsPromExporterHost=127.0.0.1\nmetricsPromExporterPort={metrics_port}\n"
        if metrics_port
        else ""
    )
    (tmp / "broker.conf").write_text(
        f"listenPort={br_port}\nbrokerIP1=127.0.0.1\nstorePathRootDir={tmp}/store\nflushDiskType={flush}\n"
        f"autoCreateTopicEnable=true\nlogDir={tmp}/logs\n{metrics}{extra}"
    )
    # the repo first, and its directory current (``-m`` puts the cwd before PYTHONPATH); the caller's PYTHONPATH
    # stays behind it (bench/stall_probe)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))}
    if pure:
        env["ROCKETQ_PURE"] = "1"
    outs = {"namesrv": tmp / "namesrv.out", "broker": tmp / "broker.out"}
    with outs["namesrv"].open("wb") as out:
        ns = subprocess.Popen(
            [sys.executable, "-m", "namesrv", "-c", str(tmp / "namesrv.conf")],
            env=env,
            cwd=repo,
            stdout=out,
            stderr=out,
        )
    with outs["broker"].open("wb") as out:
        br = subprocess.Popen(
            [sys.executable, "-m", "broker", "-n", f"127.0.0.1:{ns_port}", "-c", str(tmp / "broker.conf")],
            env=env,
            cwd=repo,
            stdout=out,
            stderr=out,
        )
    import socket

    deadline = time.monotonic() + 60
    for name, proc, port in (("namesrv", ns, ns_port), ("broker", br, br_port)):
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                if proc.poll() is None and time.monotonic() <= deadline:
                    time.sleep(0.1)
                    continue
                for p in (br, ns):
                    p.kill()
                    p.wait()
                tail = outs[name].read_text(errors="replace")[-2000:]
                if "Address already in use" in tail or "address already in use" in tail:
                    raise _PortTaken from None
                why = f"exited {proc.returncode}" if proc.returncode is not None else "no listener after 60 s"
                raise RuntimeError(f"servers did not start: {name} {why}; its output ends:\n{tail}") from None
    return [br, ns], f"127.0.0.1:{ns_port}"


async def workload(
    ns: str, n: int, size: int, batch: int, in_flight: int = 4, topic: str | None = None
) -> dict[str, float]:
    """Produce ``n`` messages in batches of ``batch`` (``in_flight`` batches outstanding), then consume them all."""
    from client import ConsumeResult, Message, Producer, PushConsumer
    from client.errors import RouteNotFoundError

    topic = topic or f"Bench{int(time.time())}"
    body = b"x" * size
    async with Producer("bench_pg", namesrv_addr=ns) as p:
        deadline = time.monotonic() + 120  # creates the topic; the broker may still be registering on a busy machine
        while True:
            try:
                await p.send(Message(topic, body))
                break
            except RouteNotFoundError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)
        t0 = time.perf_counter()
        sent = 1
        window: list[asyncio.Future[object]] = []
        while sent < n:
            k = min(batch, n - sent)
            window.append(asyncio.ensure_future(p.send_batch([Message(topic, body) for _ in range(k)])))
            sent += k
            if len(window) >= in_flight:  # a few batches in flight, like a pipelined client
                await window.pop(0)
        await asyncio.gather(*window)
        produce_s = time.perf_counter() - t0
    got = 0
    done = asyncio.Event()

    async def on_msgs(msgs: list[object]) -> ConsumeResult:
        nonlocal got
        got += len(msgs)
        if got >= n:
            done.set()
        return ConsumeResult.SUCCESS

    c = PushConsumer(
        "bench_cg",
        namesrv_addr=ns,
        consume_from_where="FIRST_OFFSET",
        consume_message_batch_max_size=32,
        pull_batch_size=32,
    )
    c.subscribe(topic, "*", on_msgs)
    t0 = time.perf_counter()
    async with c:
        await asyncio.wait_for(done.wait(), 600)
        consume_s = time.perf_counter() - t0
    return {"produce": n / produce_s, "consume": n / consume_s, "total": n / (produce_s + consume_s)}


async def memory(ns: str, backlog: int, size: int) -> dict[str, float]:
    from client import ConsumeResult, Message, Producer, PushConsumer

    topic = f"Backlog{int(time.time())}"
    async with Producer("bench_pg", namesrv_addr=ns) as p:
        for i in range(0, backlog, 32):
            await p.send_batch([Message(topic, b"y" * size) for _ in range(min(32, backlog - i))])
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    seen = 0

    async def slow(msgs: list[object]) -> ConsumeResult:
        nonlocal seen
        seen += len(msgs)
        await asyncio.sleep(0.001)
        return ConsumeResult.SUCCESS

    c = PushConsumer("bench_mem", namesrv_addr=ns, consume_from_where="FIRST_OFFSET")
    c.subscribe(topic, "*", slow)
    async with c:
        await asyncio.sleep(20)
        cached = max((len(pq) for pq in c._pqs.values()), default=0)
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "backlog": backlog,
        "consumed_in_20s": seen,
        "max_cached_per_queue": cached,
        "rss_before_MiB": rss_before / 1024,
        "rss_peak_MiB": rss_after / 1024,
    }


@contextlib.contextmanager
def redis_server(tmp: Path) -> object:
    exe = shutil.which("redis-server")
    if exe is None:
        yield None
        return
    port = 6390
    proc = subprocess.Popen(
        [
            exe,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--dir",
            str(tmp),
        ],
        stdout=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def metrics_ab(rounds: int, n: int, size: int, batch: int, runner: object, scrape_every: float = 1.0) -> None:
    """Metrics off vs on, alternating, fresh servers per run; /metrics scraped every second while on."""
    import statistics

    results: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    scrapes = [0]
    for r in range(rounds):
        for on in (False, True) if r % 2 == 0 else (True, False):
            with tempfile.TemporaryDirectory() as d:
                port = free_port() if on else 0
                procs, ns = start_servers(Path(d), port)
                scraper = None
                if on and scrape_every > 0:  # a separate process, as Prometheus is: not the client's loop
                    code = (
                        "import time, urllib.request\n"
                        "while True:\n"
                        f"    time.sleep({scrape_every})\n"
                        "    try:\n"
                        f"        urllib.request.urlopen('http://127.0.0.1:{port}/metrics', timeout=5).read()\n"
                        "        print('scraped', flush=True)\n"
                        "    except OSError:\n"
                        "        pass\n"
                    )
                    scraper = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
                try:
                    cpu0 = cpu_seconds(procs[0].pid)
                    res = runner(workload(ns, n, size, batch))  # type: ignore[operator]
                    # the broker's CPU per message (in + out): far less sensitive to a busy machine than msgs/s
                    res["broker_cpu_us_per_msg"] = (cpu_seconds(procs[0].pid) - cpu0) / n * 1e6
                finally:
                    if scraper is not None:
                        scraper.terminate()
                        out, _ = scraper.communicate(timeout=20)
                        scrapes[0] += out.count(b"scraped")
                    for p in procs:
                        p.terminate()
                        p.wait(20)
                results[on].append(res)
                print(
                    f"round {r + 1} metrics {'on ' if on else 'off'}: "
                    + ", ".join(f"{k} {v:,.1f}" for k, v in res.items())
                )
    rows = []
    for key in ("produce", "consume", "total", "broker_cpu_us_per_msg"):
        off = statistics.median(x[key] for x in results[False])
        on_ = statistics.median(x[key] for x in results[True])
        # the same round's two runs ran back to back: their ratio cancels most of the machine's drift
        paired = statistics.median(b[key] / a[key] - 1 for a, b in zip(results[False], results[True], strict=True))
        rows.append((key, f"{off:,.1f}", f"{on_:,.1f}", f"{(on_ - off) / off * 100:+.1f} %", f"{paired * 100:+.1f} %"))
    print(f"metrics off vs on: N={n}, {size} B, batches of {batch}, {rounds} rounds, {scrapes[0]} scrapes while on")
    table(rows, ("median", "metrics off", "metrics on", "on vs off", "paired per round"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--backlog", type=int, default=1_000_000)
    ap.add_argument("--metrics-ab", type=int, default=0, metavar="ROUNDS", help="metrics off vs on, ROUNDS rounds")
    ap.add_argument("--scrape-every", type=float, default=1.0, help="seconds between scrapes in --metrics-ab (0: none)")
    a = ap.parse_args()
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    if a.metrics_ab:
        metrics_ab(a.metrics_ab, a.n, a.size, a.batch, runner, a.scrape_every)
        return
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        procs, ns = start_servers(tmp)
        try:
            ours = runner(workload(ns, a.n, a.size, a.batch))
            mem = runner(memory(ns, a.backlog, a.size)) if a.memory else None
        finally:
            for p in procs:
                p.terminate()
                p.wait(20)
        rows = [
            ("rocketq (async flush)", f"{ours['produce']:,.0f}", f"{ours['consume']:,.0f}", f"{ours['total']:,.0f}")
        ]
        with redis_server(tmp) as port:
            redis = None
            if port is None:
                print("redis-server not found: Redis Streams skipped (make bench-setup installs it)")
            else:
                res = run_anchor(
                    "redis_streams.py",
                    "tput",
                    "--n",
                    str(a.n),
                    "--size",
                    str(a.size),
                    "--batch",
                    str(a.batch),
                    "--port",
                    str(port),
                    "--max-secs",
                    "60",
                )
                redis = res[0] if res else None
            if redis:
                rows.append(
                    (
                        "Redis Streams (AOF everysec)",
                        f"{redis['produce_msgs_s']:,.0f}",
                        f"{redis['consume_msgs_s']:,.0f}",
                        f"{redis['total_msgs_s']:,.0f}",
                    )
                )
                rows.append(
                    (
                        "ratio rocketq / Redis",
                        f"{ours['produce'] / redis['produce_msgs_s']:.2f}",
                        f"{ours['consume'] / redis['consume_msgs_s']:.2f}",
                        f"{ours['total'] / redis['total_msgs_s']:.2f}",
                    )
                )
        print(f"workload A: N={a.n}, {a.size} B messages, batches of {a.batch}")
        table(rows, ("system", "produce msgs/s", "consume msgs/s", "total msgs/s"))
        if mem:
            print("push consumer facing a backlog:", mem)


if __name__ == "__main__":
    main()
