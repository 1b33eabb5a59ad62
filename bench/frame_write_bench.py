"""CPU per reply of a given body size through RemotingConnection's write path, checkouts alternating.

For each checkout (``--repo A --repo B``; the first is the baseline) a process started in that checkout runs a
RemotingServer and a RemotingClient on one loop (uvloop; ``--loop asyncio`` for asyncio's): ``--depth`` callers each keep one small request in flight, and the server answers each with a reply whose body
has the case's size (a pull reply of that size). The figure is the process's CPU per request (µs), median of
``--runs`` rounds; both ends' work is in it, so a change to how a reply's frame is written shows as the difference.
``RQ_SPLIT_BODY=N`` in the environment overrides ``protocol.frame.SPLIT_BODY`` in a pure (``ROCKETQ_PURE=1``) run,
to choose the threshold.

    .venv/bin/python bench/frame_write_bench.py --repo /tmp/base --repo . [--sizes 1024,16384,1048576] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

try:
    from bench._util import table
except ImportError:
    from _util import table  # type: ignore[no-redef]

CHILD = r"""
import asyncio, json, os, sys, time
sys.path.insert(0, ".")
import protocol.frame
if os.environ.get("RQ_SPLIT_BODY"):
    protocol.frame.SPLIT_BODY = int(os.environ["RQ_SPLIT_BODY"])
from protocol.command import RemotingCommand
from protocol.remoting import HandlerRegistry, RemotingClient, RemotingServer
size, depth, n, loop_name = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
async def main():
    body = b"r" * size
    reg = HandlerRegistry()
    async def reply(ctx, cmd):
        return cmd.make_response(body=body)
    reg.register(1, reply)
    srv = RemotingServer(reg, "127.0.0.1", 0)
    await srv.start()
    client = RemotingClient()
    conn = await client.get_connection(f"127.0.0.1:{srv.port}")
    left = [n]
    async def caller():
        while left[0] > 0:
            left[0] -= 1
            r = await conn.invoke(RemotingCommand.request(1, {}, b""), 10)
            assert len(r.body) == size
    await asyncio.gather(*(caller() for _ in range(depth)))  # warm
    left[0] = n
    t0 = time.process_time()
    await asyncio.gather(*(caller() for _ in range(depth)))
    spent = time.process_time() - t0
    await client.close()
    await srv.stop()
    print(json.dumps({"us": spent / n * 1e6}))
if loop_name == "uvloop":
    import uvloop
    uvloop.run(main())
else:
    asyncio.run(main())
"""


def _run(repo: str, size: int, depth: int, n: int, loop: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(size), str(depth), str(n), loop],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["us"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", action="append", help="checkout to measure (first = baseline; default: this one)")
    ap.add_argument("--sizes", default="1024,4096,16384,65536,1048576", help="reply body sizes in bytes")
    ap.add_argument("--depth", type=int, default=8, help="requests in flight")
    ap.add_argument("--requests", type=int, default=0, help="requests per round (default: ~256 MiB of replies)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    a = ap.parse_args()
    repos = [str(Path(r).resolve()) for r in (a.repo or ["."])]
    sizes = [int(s) for s in a.sizes.split(",")]
    figures: dict[tuple[str, int], list[float]] = {(r, s): [] for r in repos for s in sizes}
    for _ in range(a.runs):
        for size in sizes:
            n = a.requests or max(2000, min(50_000, (256 << 20) // max(size, 1)))
            for repo in repos:
                figures[repo, size].append(_run(repo, size, a.depth, n, a.loop))
    rows = []
    for size in sizes:
        base = statistics.median(figures[repos[0], size])
        row = [str(size)] + [f"{statistics.median(figures[r, size]):.1f}" for r in repos]
        row += [f"{statistics.median(figures[r, size]) / base:.3f}" for r in repos[1:]]
        rows.append(row)
    head = ["body bytes"] + [f"µs/req {Path(r).name}" for r in repos] + [f"ratio {Path(r).name}" for r in repos[1:]]
    print(f"loop={a.loop} depth={a.depth} runs={a.runs} (medians)")
    table([tuple(r) for r in rows], tuple(head))


if __name__ == "__main__":
    main()
