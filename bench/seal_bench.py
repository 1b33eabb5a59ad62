"""What the whole-record CRC costs a put and a get, within one build and across builds, in one invocation.

Each *arm* is a store of one checkout with sealing on or off (``StoreConfig.seal_records``), open in its own child
process for the whole run. The parent drives the arms in lockstep: every arm runs one block of single puts (then,
later, one block of sequential gets of 32), the order rotating each round, and reports the CPU time of its thread
for the block. Neighbouring blocks of two arms saw the same machine state, so the figure for an arm against the
first one is the **median of the per-round ratios** (drift and other jobs' load cancel); the ratio of the totals is
printed beside it.

    .venv/bin/python bench/seal_bench.py                                  # this tree, sealing off vs on
    .venv/bin/python bench/seal_bench.py --arm /tmp/old:off --arm .:off --arm .:on   # before/after builds

``--arm REPO:on|off`` (repeatable; the first is the baseline). 1 KiB bodies, two properties, eight queues.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import asyncio, json, os, sys, time
repo, seal, root, block = sys.argv[1], sys.argv[2] == "on", sys.argv[3], int(sys.argv[4])
sys.path.insert(0, repo)
from broker.store import MessageStore, StoreConfig
try:
    from broker.store import PutRequest
except ImportError:
    PutRequest = None
try:
    from broker.store import GetRequest
except ImportError:  # an older checkout: get_message_sync takes its arguments loose
    GetRequest = lambda *a: a
BODY = b"x" * 1024
PROPS = {"TAGS": "TagA", "KEYS": "key1"}
BORN = ("10.0.0.1", 50000)
TOPIC = "SealBench"

async def main():
    fields = StoreConfig.__dataclass_fields__ if hasattr(StoreConfig, "__dataclass_fields__") else {}
    kw = dict(store_path_root_dir=root, mapped_file_size_commit_log=256 * 1024 * 1024,
              mapped_file_size_consume_queue=300_000 * 20, max_hash_slot_num=50_000, max_index_num=400_000)
    if "seal_records" in fields:
        kw["seal_records"] = seal
    elif seal:
        raise SystemExit(f"{repo} has no seal_records switch: use :off")
    store = MessageStore.open(StoreConfig(**kw))
    await store.start()

    async def puts(n):
        for i in range(n):
            if PutRequest is None:
                await store.put_message(TOPIC, i & 7, 0, 0, 0, BORN, BODY, PROPS)
            else:
                await store.put_message(PutRequest(TOPIC, i & 7, 0, 0, 0, BORN, BODY, PROPS))
        store.dispatcher.drain()

    await puts(block)  # first pages and consume-queue files: outside the timing
    offs = [0] * 8
    q = 0
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "put":
            t0 = time.thread_time()
            await puts(block)
            out = {"cpu": time.thread_time() - t0, "n": block}
        elif cmd == "get":
            got = 0
            t0 = time.thread_time()
            while got < block:
                req = GetRequest("g", TOPIC, q, offs[q], 32)
                res = store.get_message_sync(*req) if isinstance(req, tuple) else store.get_message_sync(req)
                if not res.message_count:
                    break
                offs[q] = res.next_begin_offset
                got += res.message_count
            out = {"cpu": time.thread_time() - t0, "n": got}
            q = (q + 1) % 8
        else:
            break
        print(json.dumps(out), flush=True)
    await store.close()

asyncio.run(main())
"""


def run(arms: list[str], rounds: int = 80, block: int = 1000) -> None:
    """Drive ``arms`` (``REPO:on|off``; the first is the baseline) in lockstep and print the figures."""
    with tempfile.TemporaryDirectory(prefix="seal-bench-") as tmp:
        procs = []
        for i, arm in enumerate(arms):
            repo, _, seal = arm.rpartition(":")
            assert seal in ("on", "off"), arm
            cmd = [sys.executable, "-c", CHILD, str(Path(repo).resolve()), seal, os.path.join(tmp, str(i)), str(block)]
            procs.append(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        results: dict[str, list[list[tuple[float, int]]]] = {"put": [[] for _ in arms], "get": [[] for _ in arms]}
        try:
            for what in ("put", "get"):
                for r in range(rounds if what == "put" else rounds + 1):  # gets: the warm-up block too
                    order = list(range(len(arms)))
                    order = order[r % len(order) :] + order[: r % len(order)]
                    for i in order:
                        p = procs[i]
                        assert p.stdin is not None and p.stdout is not None
                        p.stdin.write(what + "\n")
                        p.stdin.flush()
                        line = p.stdout.readline()
                        if not line:
                            raise SystemExit(f"arm {arms[i]} died")
                        out = json.loads(line)
                        results[what][i].append((out["cpu"], out["n"]))
        finally:
            for p in procs:
                assert p.stdin is not None
                p.stdin.write("quit\n")
                p.stdin.close()
                p.wait()
    print(f"seal cost: {rounds} rounds of {block} messages per arm, arms rotating; CPU time of the store's thread")
    for what in ("put", "get"):
        for i, arm in enumerate(arms):
            rows = results[what][i]
            per = [cpu / n * 1e6 for cpu, n in rows if n]
            line = f"seal cost, {what} {arm}: {statistics.median(per):.2f} µs/msg (median block)"
            for j in sorted({0, i - 1}) if i else ():  # against the baseline and the arm before
                line += f"; vs {arms[j]}: " + _versus(rows, results[what][j])
            print(line, flush=True)


def _versus(rows: list[tuple[float, int]], base: list[tuple[float, int]]) -> str:
    ratios = [(c / n) / (bc / bn) for (c, n), (bc, bn) in zip(rows, base, strict=True) if n and bn and bc]
    total = (sum(c for c, _ in rows) / sum(n for _, n in rows)) / (sum(c for c, _ in base) / sum(n for _, n in base))
    return (
        f"{100 * (statistics.median(ratios) - 1):+.1f} % (median of {len(ratios)} paired blocks), "
        f"{100 * (total - 1):+.1f} % (totals)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arm", action="append", help="REPO:on|off (repeatable; first = baseline)")
    ap.add_argument("--rounds", type=int, default=80, help="put blocks per arm (the get blocks read them back)")
    ap.add_argument("--block", type=int, default=1000, help="messages per block")
    a = ap.parse_args()
    run(a.arm or [f"{REPO}:off", f"{REPO}:on"], a.rounds, a.block)


if __name__ == "__main__":
    main()
