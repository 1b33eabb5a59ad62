"""Broker CPU per single send through the real connection object, without the socket: checkouts alternating.

For each checkout (``--repo A --repo B``; the first is the baseline) a fresh process starts a name server and a
broker in-process (``tests/harness.py``, ASYNC_FLUSH), builds ``--sends`` SEND_MESSAGE_V2 frames with the Python
client (1 KiB bodies, headers as its ``direct_request`` encodes them) and feeds them one at a time into a server
connection (``RemotingServer._make_connection``) whose transport only counts writes, letting the loop run one pass
after each (the dispatcher's scheduled drain). The figure is the process CPU time per send (``time.process_time``)
after a warm-up: frame decode, routing, the send handler, the store append, the reply's encode and the dispatch —
the broker's own work per send without the kernel's socket work and the event loop's I/O, which
``request_path_bench.py`` includes (and their noise with them). Medians of ``--runs`` rounds.

    .venv/bin/python bench/connection_cpu_bench.py --repo /tmp/base --repo . [--runs 7] [--sends 5000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import asyncio, json, logging, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
logging.disable(logging.CRITICAL)
import structlog
structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
from tests.harness import run_namesrv, run_broker
from protocol.frame import encode_frame
N, WARM = int(sys.argv[2]), 300

class Counting:
    def __init__(self): self.writes = 0
    def write(self, b): self.writes += 1
    def writelines(self, bs): self.writes += 1
    def is_closing(self): return False
    def get_extra_info(self, k, d=None): return ("127.0.0.1", 1) if k == "peername" else d
    def pause_reading(self): pass
    def resume_reading(self): pass
    def close(self): pass
    def abort(self): pass

async def run(tmp):
    from client import Message, Producer
    async with run_namesrv(tmp) as ns, run_broker(ns, tmp) as br:
        async with Producer("pg_conn_cpu", namesrv_addr=ns.addr) as p:
            for _ in range(10):  # the topic exists and its route is cached
                await p.send(Message("TConnCpu", b"x" * 1024))
            frames = []
            for i in range(N + WARM):
                d = p.direct_request(Message("TConnCpu", b"x" * 1024))
                d.request.opaque = i + 1
                frames.append(encode_frame(d.request))
        conn = br._server._make_connection()
        out = Counting()
        conn.connection_made(out)
        for f in frames[:WARM]:
            conn.data_received(f)
            await asyncio.sleep(0)
        c0 = time.process_time()
        for f in frames[WARM:]:
            conn.data_received(f)
            await asyncio.sleep(0)
        cpu = (time.process_time() - c0) / N * 1e6
        assert out.writes == N + WARM, out.writes  # every send answered
        print(json.dumps({"cpu_us": cpu}))

async def main():
    with tempfile.TemporaryDirectory() as d:
        await run(Path(d))

import uvloop
uvloop.run(main())
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", action="append", help="checkout to measure (first = baseline; default: this one)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--sends", type=int, default=5000)
    args = ap.parse_args()
    repos = [str(Path(r).resolve()) for r in (args.repo or ["."])]
    got: dict[str, list[float]] = {r: [] for r in repos}
    for i in range(args.runs):
        for repo in repos if i % 2 == 0 else repos[::-1]:
            proc = subprocess.run(
                [sys.executable, "-c", CHILD, repo, str(args.sends)], cwd=repo, capture_output=True, text=True
            )
            if proc.returncode:
                sys.exit(f"{repo}: run failed:\n{proc.stderr[-3000:]}")
            us = json.loads(proc.stdout.strip().splitlines()[-1])["cpu_us"]
            got[repo].append(us)
            print(f"round {i + 1} {repo} {us:.2f} µs", flush=True)
    base = statistics.median(got[repos[0]])
    for repo in repos:
        m = statistics.median(got[repo])
        print(f"send_cpu_us  {repo:40s} median {m:6.2f} µs  ratio {m / base:.3f}")


if __name__ == "__main__":
    main()
