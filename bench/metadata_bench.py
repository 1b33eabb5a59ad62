"""Metadata at scale: the cost of creating a topic and of the first send to it, with 1k vs 10k topics (issue #21).

One name server and one broker (separate processes, async flush) from a fresh store. The bench creates ``--topics``
topics one after another with UPDATE_AND_CREATE_TOPIC (what ``mqadmin updateTopic`` sends), then sends one 1 KiB
message to each of them (the producer's first send to a topic: route lookup at the name server, then the send,
which creates the consume queue it writes). For both phases it prints the rate over the first ``--window`` topics
(the table holds 0..1k topics) and over the last ``--window`` (9k..10k); ``ratio`` is last/first time per topic —
1.0 means the cost does not grow with the table, the goal is ≤ 2.

    .venv/bin/python bench/metadata_bench.py [--topics 10000] [--window 1000] [--queues 4] [--rounds 1]

With ``--rounds R`` the whole run repeats R times on fresh servers and the medians are printed.
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
    from bench.e2e_bench import start_servers
except ImportError:  # run as a script from bench/
    from _util import REPO, table  # type: ignore[no-redef]
    from e2e_bench import start_servers  # type: ignore[no-redef]

sys.path.insert(0, str(REPO))


async def _broker_addr(ns: str) -> str:
    from client.admin.admin_client import AdminClient

    async with AdminClient(ns) as admin:
        deadline = time.monotonic() + 60
        while True:
            info = await admin.cluster_info()
            addrs = [a for bd in (info.get("brokerAddrTable") or {}).values() for a in bd["brokerAddrs"].values()]
            if addrs:
                return addrs[0]
            if time.monotonic() > deadline:
                raise RuntimeError("no broker registered")
            await asyncio.sleep(0.2)


async def run_once(ns: str, n: int, window: int, queues: int) -> dict[str, float]:
    from client import Message, Producer
    from client.admin.admin_client import AdminClient

    broker = await _broker_addr(ns)
    names = [f"MetaBench{i:06d}" for i in range(n)]
    marks: list[float] = []
    async with AdminClient(ns) as admin:
        for i, name in enumerate(names):
            if i % window == 0:
                marks.append(time.perf_counter())
            await admin.create_topic(broker, name, queues, queues, 6, False)
        marks.append(time.perf_counter())
    create_first, create_last = marks[1] - marks[0], marks[-1] - marks[-2]
    body = b"x" * 1024
    marks = []
    async with Producer("meta_bench_pg", namesrv_addr=ns) as p:
        for i, name in enumerate(names):
            if i % window == 0:
                marks.append(time.perf_counter())
            for attempt in range(200):  # the route reaches the name server shortly after the creation
                try:
                    await p.send(Message(name, body))
                    break
                except Exception:
                    if attempt == 199:
                        raise
                    await asyncio.sleep(0.05)
        marks.append(time.perf_counter())
    send_first, send_last = marks[1] - marks[0], marks[-1] - marks[-2]
    return {
        "create_first": window / create_first,
        "create_last": window / create_last,
        "create_ratio": create_last / create_first,
        "send_first": window / send_first,
        "send_last": window / send_last,
        "send_ratio": send_last / send_first,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--window", type=int, default=1_000)
    ap.add_argument("--queues", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    runs: list[dict[str, float]] = []
    for r in range(a.rounds):
        with tempfile.TemporaryDirectory() as d:
            procs, ns = start_servers(Path(d))
            try:
                res = runner(run_once(ns, a.topics, a.window, a.queues))
            finally:
                for proc in procs:
                    proc.terminate()
                    proc.wait(60)
        print(f"round {r + 1}: " + ", ".join(f"{k}={v:,.2f}" for k, v in res.items()), flush=True)
        runs.append(res)
    med = {k: statistics.median(run[k] for run in runs) for k in runs[0]}
    lo, hi = f"topics 0..{a.window}", f"topics {a.topics - a.window}..{a.topics}"
    print(f"metadata at scale: {a.topics} topics x {a.queues} queues, median of {len(runs)} round(s)")
    table(
        [
            (
                "create (UPDATE_AND_CREATE_TOPIC)",
                f"{med['create_first']:,.0f}",
                f"{med['create_last']:,.0f}",
                f"{med['create_ratio']:.2f}",
            ),
            (
                "first send to each topic",
                f"{med['send_first']:,.0f}",
                f"{med['send_last']:,.0f}",
                f"{med['send_ratio']:.2f}",
            ),
        ],
        ("operation", f"{lo} /s", f"{hi} /s", "time/topic ratio"),
    )


if __name__ == "__main__":
    main()
