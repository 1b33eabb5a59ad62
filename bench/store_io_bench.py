"""Store IO benchmark (in process, 1 KiB messages): SYNC_FLUSH group commit and many queues on one topic.

    python bench/store_io_bench.py                        # both scenarios on this tree
    python bench/store_io_bench.py --repo OTHER_CHECKOUT  # the same scenarios on another checkout (before/after)
    python bench/store_io_bench.py --only sync|queues --secs 5 --rounds 3

* ``sync``: 32 producers put single messages with SYNC_FLUSH; each put returns after a group-commit fsync covering
  it (256 MiB segments, fresh store — the first segment is the one the warmer pre-writes behind the write position).
* ``queues``: single puts round-robin over 8 and over 512 queues of one topic (ASYNC_FLUSH, flushers running),
  2 s of warm-up then the same number of seconds each, alternating; prints msgs/s and the 512/8 ratio.

Lines are ``name: value`` so runs can be compared; medians over ``--rounds``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
ap.add_argument("--only", choices=["sync", "queues"])
ap.add_argument("--secs", type=float, default=5.0)
ap.add_argument("--rounds", type=int, default=3)
ARGS = ap.parse_args()
sys.path.insert(0, ARGS.repo)

from _util import store_config  # noqa: E402  (this script's folder: ARGS.repo may be a checkout without it)

from broker.store import MessageStore  # noqa: E402

try:  # the store API takes a PutRequest since the put-path refactor; an older checkout takes the fields loose
    from broker.store import PutRequest
except ImportError:  # pragma: no cover - only on an older checkout
    PutRequest = None


def _put(store: MessageStore, *fields: object):
    if PutRequest is None:
        return store.put_message(*fields)
    return store.put_message(PutRequest(*fields))


BODY = os.urandom(1024)
PROPS = {"TAGS": "TagA", "KEYS": "key1"}
BORN = ("10.0.0.1", 50000)
TOPIC = "BenchTopic"


async def sync_round(root: str, secs: float, producers: int = 32) -> float:
    store = MessageStore.open(store_config(root, flush_disk_type="SYNC_FLUSH"))
    await store.start()
    # steady state: a broker's warmer has long pre-written the segment being filled and the next one (the
    # store before the warmer existed has nothing to wait for)
    await _put(store, TOPIC, 0, 0, 0, 0, BORN, BODY, PROPS)
    warmer = getattr(store, "_warmer", None)
    t_warm = time.perf_counter()
    while warmer is not None and not warmer.idle() and time.perf_counter() - t_warm < 60:
        await asyncio.sleep(0.05)
    if warmer is not None:
        print(f"  warmer idle after {time.perf_counter() - t_warm:.1f} s", flush=True)
    count = 0
    stop = time.perf_counter() + secs

    async def producer(p: int) -> None:
        nonlocal count
        while time.perf_counter() < stop:
            res = await _put(store, TOPIC, p & 7, 0, 0, 0, BORN, BODY, PROPS)
            assert res.ok
            count += 1

    h = store.stats.fsync_latency_ms
    n0, tot0 = sum(h.counts), h.total
    t0 = time.perf_counter()
    await asyncio.gather(*(producer(p) for p in range(producers)))
    dt = time.perf_counter() - t0
    n = sum(h.counts) - n0
    print(
        f"  {count / dt:,.0f} msgs/s, {n} fsyncs, mean fsync {(h.total - tot0) / max(n, 1) * 1000:.0f} us", flush=True
    )
    await store.close()
    return count / dt


async def queues_round(root: str, secs: float, nqueues: int, warmup: float = 2.0) -> tuple[float, float]:
    """Steady state: ``warmup`` seconds of the same load first (every queue exists and has written), then
    ``secs`` measured: msgs/s, and the process's CPU µs per put (every thread: the loop's puts and dispatch, the
    flushers' and warmer's syscalls), which another process's load on the machine moves far less."""
    store = MessageStore.open(store_config(root))
    await store.start()
    count = 0

    async def load(until: float) -> None:
        nonlocal count
        while time.perf_counter() < until:
            for _ in range(64):
                res = await _put(store, TOPIC, count % nqueues, 0, 0, 0, BORN, BODY, PROPS)
                assert res.ok
                count += 1
            await asyncio.sleep(0)  # let the dispatcher and flushers run, as a broker's loop would

    await load(time.perf_counter() + warmup)
    count = 0
    c0 = time.process_time()
    t0 = time.perf_counter()
    await load(t0 + secs)
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    await store.close()
    return count / dt, cpu / count * 1e6


def main() -> None:
    base = tempfile.mkdtemp(prefix="store-io-bench-", dir=os.environ.get("BENCH_DIR"))
    print(f"repo: {ARGS.repo}", flush=True)
    try:
        if ARGS.only in (None, "sync"):
            rates = []
            for r in range(ARGS.rounds):
                rates.append(asyncio.run(sync_round(os.path.join(base, f"sync{r}"), ARGS.secs)))
                shutil.rmtree(os.path.join(base, f"sync{r}"), ignore_errors=True)
            print(f"sync group commit 32 producers: {statistics.median(rates):,.0f} msgs/s  rounds={rates}", flush=True)
        if ARGS.only in (None, "queues"):
            got: dict[int, list[float]] = {8: [], 512: []}
            cpu: dict[int, list[float]] = {8: [], 512: []}
            for r in range(ARGS.rounds):
                for nq in (8, 512) if r % 2 == 0 else (512, 8):
                    d = os.path.join(base, f"q{nq}-{r}")
                    rate, us = asyncio.run(queues_round(d, ARGS.secs, nq))
                    got[nq].append(rate)
                    cpu[nq].append(us)
                    shutil.rmtree(d, ignore_errors=True)
            m8, m512 = statistics.median(got[8]), statistics.median(got[512])
            c8, c512 = statistics.median(cpu[8]), statistics.median(cpu[512])
            for nq, m, c in ((8, m8, c8), (512, m512, c512)):
                rounds = [round(x) for x in got[nq]]
                print(f"queues {nq}: {m:,.0f} msgs/s, {c:.2f} CPU us/put  rounds={rounds}", flush=True)
            print(f"queues 512/8: {m512 / m8:.3f} msgs/s, {c512 / c8:.3f} CPU per put", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
