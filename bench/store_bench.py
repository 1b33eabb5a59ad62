"""Message-store benchmark (in process, 1 KiB messages) with the disk ceilings measured in the same run.

    python bench/store_bench.py                 # put / batch put / sync group commit / get / seal cost + disk anchors
    python bench/store_bench.py --profile       # also cProfile the single put path (top 15)
    python bench/store_bench.py --seal-only [--seal-against OLD_CHECKOUT]
                                                # only the whole-record CRC's cost (bench/seal_bench.py's arms)
    python bench/store_bench.py --memory [--gb N]   # tracemalloc heap of the store after 100 MB (and N GB)

Lines are ``name: value`` so they can be compared between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from broker.store import BatchPutRequest, GetRequest, MessageStore, PutRequest  # noqa: E402  # noqa: E402
from protocol.batch import BatchItem, decode_batch, encode_batch  # noqa: E402

try:
    from bench import seal_bench
    from bench._util import store_config
except ImportError:
    import seal_bench  # type: ignore[no-redef]
    from _util import store_config  # type: ignore[no-redef]

BODY = os.urandom(1024)
PROPS = {"TAGS": "TagA", "KEYS": "key1"}
BORN = ("10.0.0.1", 50000)
TOPIC = "BenchTopic"


def _report(name: str, n: int, nbytes: int, dt: float) -> None:
    print(f"{name}: {n / dt:,.0f} msgs/s  {nbytes / dt / 1e6:,.1f} MB/s  ({n} msgs in {dt:.2f} s)", flush=True)


async def bench_put_single(root: str, n: int) -> MessageStore:
    store = MessageStore.open(store_config(root))
    await store.start()
    t0 = time.perf_counter()
    for i in range(n):
        await store.put_message(PutRequest(TOPIC, i & 7, 0, 0, 0, BORN, BODY, PROPS))
    # puts return before dispatch (consume queues + index); count it, so the figure is "stored and readable"
    store.dispatcher.drain()
    dt = time.perf_counter() - t0
    _report("put single (async flush, incl. dispatch)", n, n * len(BODY), dt)
    return store


async def bench_put_batch(root: str, n: int, batch: int = 32) -> None:
    store = MessageStore.open(store_config(root))
    await store.start()
    # what the broker does per SEND_BATCH_MESSAGE: decode the wire body, then put its items
    wire = encode_batch([BatchItem(BODY, dict(PROPS)) for _ in range(batch)])
    t0 = time.perf_counter()
    for i in range(n // batch):
        await store.put_messages(BatchPutRequest(TOPIC, i & 7, 0, 0, BORN, decode_batch(wire)))
    store.dispatcher.drain()
    dt = time.perf_counter() - t0
    _report(f"put batch {batch} (async flush, incl. dispatch)", n // batch * batch, n // batch * batch * len(BODY), dt)
    await store.close()


async def bench_sync(root: str, secs: float, producers: int = 32) -> None:
    store = MessageStore.open(store_config(root, flush_disk_type="SYNC_FLUSH"))
    await store.start()
    count = 0
    stop = time.perf_counter() + secs

    async def producer(p: int) -> None:
        nonlocal count
        while time.perf_counter() < stop:
            res = await store.put_message(PutRequest(TOPIC, p & 7, 0, 0, 0, BORN, BODY, PROPS))
            assert res.ok
            count += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(producer(p) for p in range(producers)))
    dt = time.perf_counter() - t0
    _report(f"put sync flush, group commit, {producers} producers", count, count * len(BODY), dt)
    fs = store.runtime_info()["groupCommitFsyncs"]
    print(f"  fsyncs: {fs} ({count / max(fs, 1):.1f} msgs per fsync)", flush=True)
    await store.close()


def bench_get(store: MessageStore, n: int) -> None:
    got = 0
    nbytes = 0
    t0 = time.perf_counter()
    for q in range(8):
        off = 0
        while True:
            r = store.get_message_sync(GetRequest("g", TOPIC, q, off, 32))
            if not r.message_count:
                break
            got += r.message_count
            nbytes += len(r.buffer)
            off = r.next_begin_offset
    dt = time.perf_counter() - t0
    assert got == n, (got, n)
    _report("get sequential (32 per pull)", got, nbytes, dt)


def disk_anchor(args: list[str]) -> None:
    script = REPO.parent / "shared" / "bench" / "anchors" / "disk_append.py"
    if not script.exists():
        print(f"disk anchor {args[0]}: skipped ({script} not found)")
        return
    d = tempfile.mkdtemp(prefix="anchors-", dir=os.environ.get("BENCH_DIR"))
    try:
        p = subprocess.run(
            [sys.executable, str(script), *args, "--dir", d], capture_output=True, text=True, timeout=120
        )
    finally:
        shutil.rmtree(d, ignore_errors=True)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        print(f"disk anchor {' '.join(args)}: skipped (exit {p.returncode}: {last})")
        return
    print(f"disk anchor {' '.join(args)}: {p.stdout.strip()}", flush=True)


def profile_put(root: str, n: int) -> None:
    async def go() -> None:
        store = MessageStore.open(store_config(root))
        await store.start()
        pr = cProfile.Profile()
        pr.enable()
        for i in range(n):
            await store.put_message(PutRequest(TOPIC, i & 7, 0, 0, 0, BORN, BODY, PROPS))
        pr.disable()
        await store.close()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(15)
        print(s.getvalue())

    asyncio.run(go())


def memory(root: str, gb: float) -> None:
    async def go() -> None:
        store = MessageStore.open(store_config(root))
        await store.start()
        items = [BatchItem(BODY, dict(PROPS)) for _ in range(32)]
        tracemalloc.start()
        gc.collect()
        base = tracemalloc.get_traced_memory()[0]
        stored = 0
        targets = [100e6] + ([gb * 1e9] if gb else [])
        i = 0
        for target in targets:
            while stored < target:
                await store.put_messages(BatchPutRequest(TOPIC, i & 7, 0, 0, BORN, items))
                stored += 32 * len(BODY)
                i += 1
            gc.collect()
            cur, peak = tracemalloc.get_traced_memory()
            print(f"heap after {stored / 1e6:,.0f} MB stored: {(cur - base) / 1e6:.2f} MB (peak {peak / 1e6:.2f} MB)")
        tracemalloc.stop()
        await store.close()

    asyncio.run(go())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000, help="messages for the put/get runs")
    ap.add_argument("--sync-secs", type=float, default=5.0)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--gb", type=float, default=0.0)
    ap.add_argument("--no-anchors", action="store_true")
    ap.add_argument("--seal-rounds", type=int, default=80, help="blocks of 1,000 puts per arm in the seal section")
    ap.add_argument("--seal-against", metavar="CHECKOUT", help="also the store of another checkout, sealing off")
    ap.add_argument("--seal-only", action="store_true", help="run only the seal cost section")
    a = ap.parse_args()
    base = tempfile.mkdtemp(prefix="store-bench-", dir=os.environ.get("BENCH_DIR"))
    try:
        if a.memory:
            memory(os.path.join(base, "mem"), a.gb)
            return

        async def go() -> None:
            if a.seal_only:
                return
            store = await bench_put_single(os.path.join(base, "single"), a.n)
            bench_get(store, a.n)
            await store.close()
            await bench_put_batch(os.path.join(base, "batch"), a.n)
            await bench_sync(os.path.join(base, "sync"), a.sync_secs)

        asyncio.run(go())
        # the whole-record CRC's cost: sealing off/on in this tree (and the store of --seal-against, the baseline)
        arms = ([f"{a.seal_against}:off"] if a.seal_against else []) + [f"{REPO}:off", f"{REPO}:on"]
        seal_bench.run(arms, a.seal_rounds)
        if not a.no_anchors and not a.seal_only:
            disk_anchor(["buffered", "--n", "200000"])
            disk_anchor(["group", "--secs", "3", "--interval-ms", "1"])
        if a.profile:
            profile_put(os.path.join(base, "prof"), min(a.n, 50_000))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
