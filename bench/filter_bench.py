"""SQL92 filter cost: pulls of the same queue unfiltered, by tag and by SQL92 selectors that match all, half or none.

    python bench/filter_bench.py                 # store-level gets + remoting pulls, 50k messages of 256 B
    python bench/filter_bench.py --messages 200000 --rounds 5

Two levels, same data (each message has properties ``a`` = i, ``b`` = 'x'|'y', tag TagA|TagB):
- ``store``: ``MessageStore.get_message`` in process (the broker's read, where the filter runs), 32 per get;
- ``pull``: PULL_MESSAGE through a broker on loopback with a raw remoting client (SUBSCRIPTION flag, the
  expression in the header), 32 per pull, reply bodies not decoded.

Per arm it prints messages scanned/s and delivered/s and µs per delivered message; the figure to compare is the
cost per *delivered* message of a filter that matches everything with the unfiltered pull's. "sql TagA + a >= 0"
shows the consume queue's tag-hash pre-filter of a selector that needs a tag.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from broker.filter import build_subscription, make_filter  # noqa: E402
from broker.store import GetRequest, MessageStore, PutRequest  # noqa: E402
from protocol.codes import RequestCode, ResponseCode  # noqa: E402
from protocol.command import RemotingCommand  # noqa: E402
from protocol.remoting import RemotingClient  # noqa: E402

TOPIC = "FilterBench"
BODY = b"x" * 256
ARMS: list[tuple[str, str, str]] = [
    ("unfiltered", "*", "TAG"),
    ("tag TagA (half)", "TagA", "TAG"),
    ("sql match all", "a >= 0", "SQL92"),
    ("sql match all, 3 terms", "a >= 0 AND b IN ('x', 'y') AND TAGS IS NOT NULL", "SQL92"),
    ("sql match half", "b = 'x'", "SQL92"),
    ("sql match none", "a < 0", "SQL92"),
    ("sql TagA + a >= 0 (half)", "TAGS = 'TagA' AND a >= 0", "SQL92"),
]


def _props(i: int) -> dict[str, str]:
    return {"TAGS": "TagA" if i % 2 == 0 else "TagB", "a": str(i), "b": "x" if i % 2 == 0 else "y"}


async def _fill(store: MessageStore, n: int) -> None:
    for i in range(n):
        await store.put_message(PutRequest(TOPIC, 0, 0, 0, 0, ("10.0.0.1", 5000), BODY, _props(i)))
    store.dispatcher.drain()


def _store_arm(store: MessageStore, n: int, expr: str, kind: str) -> tuple[float, int]:
    f = make_filter(build_subscription(TOPIC, expr, 0, kind))
    off = delivered = 0
    t0 = time.perf_counter()
    while off < n:
        r = store.get_message_sync(
            GetRequest(
                "G",
                TOPIC,
                0,
                off,
                32,
                None,
                f.match_code if f else None,
                f.match_tags if f else None,
                f.match_record if f else None,
            )
        )
        delivered += r.message_count
        off = r.next_begin_offset
    return time.perf_counter() - t0, delivered


async def _pull_arm(client: RemotingClient, addr: str, n: int, expr: str, kind: str) -> tuple[float, int]:
    off = delivered = 0
    t0 = time.perf_counter()
    while off < n:
        cmd = RemotingCommand.request(
            RequestCode.PULL_MESSAGE,
            {
                "consumerGroup": "GBench",
                "topic": TOPIC,
                "queueId": "0",
                "queueOffset": str(off),
                "maxMsgNums": "32",
                "sysFlag": "4",
                "commitOffset": "-1",
                "suspendTimeoutMillis": "0",
                "subscription": expr,
                "subVersion": "0",
                "expressionType": kind,
            },
        )
        resp = await client.invoke(addr, cmd, 10.0)
        if resp.code not in (ResponseCode.SUCCESS, ResponseCode.PULL_RETRY_IMMEDIATELY):
            raise RuntimeError(f"pull failed: {resp.code} {resp.remark}")
        delivered += resp.body.count(b"\x02a\x01") if resp.body else 0  # one per message (property a)
        off = int(resp.ext_fields["nextBeginOffset"])
    return time.perf_counter() - t0, delivered


def _line(level: str, name: str, n: int, times: list[float], delivered: int) -> None:
    dt = statistics.median(times)
    per = dt / delivered * 1e6 if delivered else float("nan")
    print(
        f"{level:5} {name:30} scanned {n / dt:>10,.0f}/s  delivered {delivered / dt:>10,.0f}/s"
        f"  {per:6.2f} µs/delivered  (median of {len(times)})",
        flush=True,
    )


async def _alternate(level: str, n: int, rounds: int, arm: Callable[[str, str], Awaitable[tuple[float, int]]]) -> None:
    """Every arm once per round (so a noisy neighbour hits them alike), then the medians per arm."""
    runs: dict[str, list[tuple[float, int]]] = {name: [] for name, _e, _k in ARMS}
    for _ in range(rounds):
        for name, expr, kind in ARMS:
            runs[name].append(await arm(expr, kind))
    for name, _e, _k in ARMS:
        _line(level, name, n, [t for t, _ in runs[name]], runs[name][0][1])


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    from tests.harness import run_broker  # the in-process broker of the test suite, on a free port

    with tempfile.TemporaryDirectory() as tmp:
        async with run_broker(None, Path(tmp), enablePropertyFilter=True) as broker:
            broker.topics.create_if_absent(TOPIC, 1, 6)
            await _fill(broker.store, a.messages)
            print(f"{a.messages} messages of {len(BODY)} B, 32 per get/pull, rounds={a.rounds}")
            store = broker.store

            async def by_store(expr: str, kind: str) -> tuple[float, int]:
                return _store_arm(store, a.messages, expr, kind)

            await _alternate("store", a.messages, a.rounds, by_store)
            client = RemotingClient()
            try:

                async def by_pull(expr: str, kind: str) -> tuple[float, int]:
                    return await _pull_arm(client, broker.addr, a.messages, expr, kind)

                await _alternate("pull", a.messages, a.rounds, by_pull)
            finally:
                await client.close()


if __name__ == "__main__":
    asyncio.run(main())
