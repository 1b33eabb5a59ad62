"""Workload B's broker side in one process, before/after: a send that wakes a held pull, two checkouts alternating.

For each checkout (``--repo A --repo B``; the first is the baseline) a child process starts an in-process name server
and broker (``tests/harness.py``, the checkout's own build: compiled where it has one) and drives two of the broker's
own ``RemotingConnection`` objects through stand-in transports that only record what is written (no sockets, so the
figures are the broker's Python work alone, without the kernel's or a client's). One cycle, ``--n`` times a round:

1. connection P sends a PULL_MESSAGE (SUSPEND, at the queue's end): the broker finds nothing and holds it;
2. connection S sends a SEND_MESSAGE_V2 to that queue (frames prepared beforehand by the SDK's ``direct_request``);
3. two loop passes run (what the broker does after the read: its dispatch, a woken Task).

Per round: the broker's CPU per cycle (``process_time``, µs: the send, the woken pull's reply, the next hold), the
median time from the send frame handed to the broker to the pull's reply written (µs), and how many cycles wrote the
pull's reply before the send's. Checkouts alternate round by round; each figure is the median of ``--runs`` rounds,
the ratios are B / A (< 1 is better).

    .venv/bin/python bench/held_pull_bench.py --repo /tmp/base --repo . [--runs 5] [--n 2000]
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
sys.path.insert(0, sys.argv[1])
logging.disable(logging.CRITICAL)
import structlog
structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
from tests.harness import run_namesrv, run_broker
from protocol.codes import RequestCode
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder, encode_frame
from protocol.headers import PullMessageRequestHeader

N = int(sys.argv[2])
TOPIC, GROUP, MAX = "THeld", "cg_held", 1 << 24
written = []  # (transport name, perf_counter_ns) of each write since the cycle began

class Recorder:
    def __init__(self, name): self.name = name
    def write(self, b): written.append((self.name, time.perf_counter_ns()))
    def writelines(self, bs): written.append((self.name, time.perf_counter_ns()))
    def is_closing(self): return False
    def get_extra_info(self, k, d=None): return ("127.0.0.1", 1) if k == "peername" else d
    def pause_reading(self): pass
    def resume_reading(self): pass
    def close(self): pass
    def abort(self): pass

async def main():
    from client import Message, Producer
    with tempfile.TemporaryDirectory(prefix="heldpull") as d:
        await run(Path(d))

async def run(tmp):
    from client import Message, Producer
    # 64 MiB segments: the run writes ~1.2 KiB a cycle, and the directory goes when it ends
    async with run_namesrv(tmp) as ns, run_broker(ns, tmp, mappedFileSizeCommitLog=64 << 20) as br:
        async with Producer("pg_held", namesrv_addr=ns.addr) as p:
            for _ in range(30):  # the topic exists, its route is cached
                await p.send(Message(TOPIC, b"x" * 1024))
            sends = []
            for i in range(N + 100):
                d = p.direct_request(Message(TOPIC, b"x" * 1024))
                d.request.opaque = i + 1
                sends.append((d.mq.queue_id, encode_frame(d.request, MAX)))
        server = br._server
        s_conn, p_conn = server._make_connection(), server._make_connection()
        s_conn.connection_made(Recorder("send"))
        p_conn.connection_made(Recorder("pull"))
        opaque = 10**7

        async def cycle(qid, frame):
            nonlocal opaque
            opaque += 1
            off = br.store.get_max_offset_in_queue(TOPIC, qid)
            h = PullMessageRequestHeader(GROUP, TOPIC, qid, off, 32, 2 | 4, -1, 15000, 0, "*", "TAG")
            cmd = RemotingCommand.request(RequestCode.PULL_MESSAGE, h.to_ext_fields())
            cmd.opaque = opaque
            p_conn.data_received(encode_frame(cmd, MAX))
            del written[:]
            t0 = time.perf_counter_ns()
            s_conn.data_received(frame)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            pulls = [t for who, t in written if who == "pull"]
            return (pulls[0] - t0) / 1000 if pulls else None, bool(written) and written[0][0] == "pull"

        for qid, frame in sends[:100]:
            await cycle(qid, frame)
        lat, first = [], 0
        c0 = time.process_time()
        for qid, frame in sends[100:]:
            us, pull_first = await cycle(qid, frame)
            if us is None:
                raise SystemExit("a held pull was not answered by the send that reached its queue")
            lat.append(us)
            first += pull_first
        cpu = (time.process_time() - c0) / N * 1e6
        print(json.dumps({"cpu_us": cpu, "pull_out_us": sorted(lat)[len(lat) // 2], "pull_first": first / N}))

import uvloop
from pathlib import Path
uvloop.run(main())
"""


def run_child(repo: Path, n: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(repo.resolve()), str(n)], cwd=repo, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"the run against {repo} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", action="append", required=True, type=Path, help="a checkout (twice: baseline first)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=2000, help="cycles per round")
    a = ap.parse_args()
    figs: dict[Path, list[dict[str, float]]] = {r: [] for r in a.repo}
    for rnd in range(a.runs):
        order = a.repo if rnd % 2 == 0 else list(reversed(a.repo))
        for repo in order:
            figs[repo].append(run_child(repo, a.n))
            print(f"round {rnd + 1} {repo}: {figs[repo][-1]}", flush=True)
    keys = ("cpu_us", "pull_out_us", "pull_first")
    med = {r: {k: statistics.median(f[k] for f in figs[r]) for k in keys} for r in a.repo}
    print(f"\n{'checkout':40} {'CPU/cycle µs':>13} {'send in → pull out µs':>22} {'pull reply first':>17}")
    for r in a.repo:
        m = med[r]
        print(f"{str(r)[-40:]:40} {m['cpu_us']:13.1f} {m['pull_out_us']:22.1f} {m['pull_first']:17.2f}")
    if len(a.repo) == 2:
        base, new = med[a.repo[0]], med[a.repo[1]]
        print(
            f"{'ratio (second / first)':40} {new['cpu_us'] / base['cpu_us']:13.2f} "
            f"{new['pull_out_us'] / base['pull_out_us']:22.2f}"
        )


if __name__ == "__main__":
    main()
