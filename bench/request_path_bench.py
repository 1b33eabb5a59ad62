"""The single-message request path, before/after: two checkouts measured in one invocation, alternating.

For each checkout (``--repo A --repo B``; the first is the baseline) a fresh name server + broker (ASYNC_FLUSH) is
started from that checkout and a client process from the same checkout runs one case; the cases and checkouts
alternate round by round and every figure is the median of ``--runs`` rounds. Cases (1 KiB bodies):

* ``single``: one ``Producer.send`` in flight at a time (msgs/s).
* ``c32``: 32 callers each keeping one single send in flight (msgs/s).
* ``rate``: single sends at a fixed rate (``--rate``, default 5000 msgs/s) for ``--secs``, open loop (each send
  starts at its scheduled time, whatever the earlier ones did), one push consumer in the same process; end-to-end
  latency from a message's scheduled send time to its listener call: p50 / p99 (ms) and the rate reached.

Each row also gives the broker's CPU per message (user+system of the broker process over the case / messages) and
the client process's. Figures are for comparing two checkouts on one machine in one run, not absolute.

    .venv/bin/python bench/request_path_bench.py --repo /tmp/base --repo . [--runs 3] [--secs 3] [--rate 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

try:
    from bench._util import table
    from bench.e2e_bench import start_servers
except ImportError:
    from _util import table  # type: ignore[no-redef]
    from e2e_bench import start_servers  # type: ignore[no-redef]

CLIENT = r"""
import asyncio, json, os, sys, time

def cpu():
    t = os.times()
    return t.user + t.system

async def main(ns, case, secs, rate, broker_pid):
    from client import ConsumeResult, Message, Producer, PushConsumer
    from client.errors import RouteNotFoundError

    def broker_cpu():
        f = open(f"/proc/{broker_pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    topic = f"RP{case}{os.getpid()}"
    body = b"x" * 1024
    out = {}
    async with Producer("rp_pg", namesrv_addr=ns) as p:
        end = time.monotonic() + 60
        while True:
            try:
                await p.send(Message(topic, body))
                break
            except RouteNotFoundError:
                if time.monotonic() > end:
                    raise
                await asyncio.sleep(0.2)
        for _ in range(200):  # warm up
            await p.send(Message(topic, body))
        if case in ("single", "c32"):
            callers = 1 if case == "single" else 32
            n = 0
            stop = False

            async def caller():
                nonlocal n
                while not stop:
                    await p.send(Message(topic, body))
                    n += 1

            b0, c0, t0 = broker_cpu(), cpu(), time.perf_counter()
            tasks = [asyncio.ensure_future(caller()) for _ in range(callers)]
            await asyncio.sleep(secs)
            stop = True
            await asyncio.gather(*tasks)
            el = time.perf_counter() - t0
            out = {"rate": n / el, "broker_us": (broker_cpu() - b0) / n * 1e6, "client_us": (cpu() - c0) / n * 1e6}
        else:
            lat = []
            total = int(rate * secs)
            done = asyncio.Event()

            async def on_msgs(msgs):
                now = time.perf_counter()
                for m in msgs:
                    if m.topic == topic and m.body[:1] == b"T":
                        lat.append(now - float(m.body[1:25]))
                if len(lat) >= total:
                    done.set()
                return ConsumeResult.SUCCESS

            c = PushConsumer("rp_cg" + str(os.getpid()), namesrv_addr=ns, consume_from_where="LAST_OFFSET")
            c.subscribe(topic, "*", on_msgs)
            async with c:
                await asyncio.sleep(1.0)  # rebalance: the consumer owns the queues and has pulls held
                pending = set()
                b0, c0, t0 = broker_cpu(), cpu(), time.perf_counter()
                i = 0
                while i < total:
                    now = time.perf_counter()
                    due = min(total, int((now - t0) * rate) + 1)
                    while i < due:
                        at = t0 + i / rate
                        m = Message(topic, b"T" + f"{at:24.6f}".encode() + body[25:])
                        f = asyncio.ensure_future(p.send(m))
                        pending.add(f)
                        f.add_done_callback(pending.discard)
                        i += 1
                    await asyncio.sleep(max(0.0, t0 + i / rate - time.perf_counter()))
                sent_s = time.perf_counter() - t0
                if pending:
                    await asyncio.gather(*pending, return_exceptions=True)
                try:
                    await asyncio.wait_for(done.wait(), 30)
                except TimeoutError:
                    pass
                b1, c1 = broker_cpu(), cpu()
            lat.sort()
            k = len(lat)
            out = {
                "rate": total / sent_s,
                "got": k,
                "p50_ms": lat[k // 2] * 1e3 if k else float("nan"),
                "p99_ms": lat[min(k - 1, int(k * 0.99))] * 1e3 if k else float("nan"),
                "broker_us": (b1 - b0) / total * 1e6,
                "client_us": (c1 - c0) / total * 1e6,
            }
    print(json.dumps(out))

try:
    import uvloop
    uvloop.install()
except ImportError:
    pass
asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])))
"""


def run_case(repo: Path, case: str, secs: float, rate: float) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="rqpath-"))
    procs, ns = start_servers(tmp, repo=repo)
    broker_pid = procs[0].pid
    try:
        res = subprocess.run(
            [sys.executable, "-c", CLIENT, ns, case, str(secs), str(rate), str(broker_pid)],
            env={**os.environ, "PYTHONPATH": str(repo)},
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if res.returncode != 0:
            raise RuntimeError(f"{case} on {repo} failed: {res.stderr[-2000:]}")
        return dict(json.loads(res.stdout.strip().splitlines()[-1]))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", action="append", required=True, help="checkout to measure (first = baseline)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--secs", type=float, default=3.0)
    ap.add_argument("--rate", type=float, default=5000.0)
    ap.add_argument("--cases", default="single,c32,rate")
    args = ap.parse_args()
    repos = [Path(r).resolve() for r in args.repo]
    cases = args.cases.split(",")
    results: dict[tuple[str, Path], list[dict[str, Any]]] = {}
    for rnd in range(args.runs):
        order = repos if rnd % 2 == 0 else list(reversed(repos))
        for case in cases:
            for repo in order:
                r = run_case(repo, case, args.secs, args.rate)
                print(f"round {rnd + 1} {case:6} {repo.name:10} {json.dumps(r)}", flush=True)
                results.setdefault((case, repo), []).append(r)
    rows = []
    keys = ("rate", "p50_ms", "p99_ms", "broker_us", "client_us")
    base = repos[0]
    for case in cases:
        for repo in repos:
            runs = results[(case, repo)]
            med = {k: statistics.median(r[k] for r in runs) for k in keys if k in runs[0]}
            ref = {k: statistics.median(r[k] for r in results[(case, base)]) for k in med}
            cells = [f"{med[k]:.1f} ({med[k] / ref[k]:.2f}x)" if k in med else "-" for k in keys]
            rows.append((case, str(repo), *cells))
    table(rows, ("case", "checkout", "msgs/s", "p50 ms", "p99 ms", "broker µs/msg", "client µs/msg"))


if __name__ == "__main__":
    main()
