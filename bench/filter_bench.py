"""SQL92 filter cost: pulls of the same queue unfiltered, by tag and by SQL92 selectors that match all, half or none.

    python bench/filter_bench.py                 # store-level gets + remoting pulls, 50k messages of 256 B
    python bench/filter_bench.py --messages 200000 --rounds 5

Two levels, same data (each message has properties ``a`` = i, ``b`` = 'x'|'y', tag TagA|TagB):
- ``store``: ``MessageStore.get_message`` in process (the broker's read, where the filter runs), 32 per get;
- ``pull``: PULL_MESSAGE through a broker on loopback with a raw remoting client (SUBSCRIPTION flag, the
  expression in the header), 32 per pull, reply bodies not decoded.

Every SQL92 selector is used once (one filtered get of the queue's first message) before the other messages are
sent, as a consumer that subscribed before the producer sends: dispatch then judges each message for it and the
store keeps the verdict per consume-queue entry (``broker/store/filter_marks.py``), which is what a steady-state
pull reads. The ``cold`` arm drops the kept verdicts before each run: the cost of a first read of messages sent
before the subscription existed (or after a restart), where every record is evaluated (and its verdict kept).
Arms alternate within each round (order reversed every other round), so a noisy neighbour hits them alike.

Per arm it prints messages scanned/s and delivered/s and µs per delivered message, then the figure the filter must
meet: the delivered rate of "sql match all" (and of its cold first read) over the unfiltered arm's, per level. On a
shared machine the per-arm medians drift with the neighbours, so each level ends with a *paired* measure: every get
(pull) of 32 is done twice in a row, unfiltered and by "a >= 0" (the order alternating), the time summed per arm over
``--rounds`` passes of the queue; its ratio (unfiltered time / filtered time) is the cost of the filter on matching
messages, ≥ 1 meaning no dearer.
It also prints what dispatch pays: the fill rate of a queue with no selector registered and of one with all six.
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

from broker.filter import build_subscription  # noqa: E402
from broker.services.consume import ConsumeRequest  # noqa: E402
from broker.store import MessageStore, PutRequest  # noqa: E402
from broker.store.results import GetMessageResult  # noqa: E402
from protocol.codes import RequestCode, ResponseCode  # noqa: E402
from protocol.command import RemotingCommand  # noqa: E402
from protocol.remoting import RemotingClient  # noqa: E402

TOPIC = "FilterBench"
BODY = b"x" * 256
COLD = "sql match all, cold"
ARMS: list[tuple[str, str, str]] = [
    ("unfiltered", "*", "TAG"),
    ("tag TagA (half)", "TagA", "TAG"),
    ("sql match all", "a >= 0", "SQL92"),
    (COLD, "(a >= 0)", "SQL92"),  # "a >= 0" under another key: its verdicts are dropped before each run
    ("sql match all, 3 terms", "a >= 0 AND b IN ('x', 'y') AND TAGS IS NOT NULL", "SQL92"),
    ("sql match half", "b = 'x'", "SQL92"),
    ("sql match none", "a < 0", "SQL92"),
    ("sql TagA + a >= 0 (half)", "TAGS = 'TagA' AND a >= 0", "SQL92"),
]


def _props(i: int) -> dict[str, str]:
    return {"TAGS": "TagA" if i % 2 == 0 else "TagB", "a": str(i), "b": "x" if i % 2 == 0 else "y"}


async def _fill(store: MessageStore, topic: str, first: int, n: int) -> float:
    t0 = time.perf_counter()
    for i in range(first, n):
        await store.put_message(PutRequest(topic, 0, 0, 0, 0, ("10.0.0.1", 5000), BODY, _props(i)))
    store.dispatcher.drain()
    return time.perf_counter() - t0


def _get(store: MessageStore, topic: str, off: int, expr: str, kind: str) -> GetMessageResult:
    f = build_subscription(topic, expr, 0, kind).filter
    return store.get_message_sync(ConsumeRequest("G", topic, 0, True, off, 32).read(None, f))


def _store_arm(store: MessageStore, n: int, expr: str, kind: str) -> tuple[float, int]:
    f = build_subscription(TOPIC, expr, 0, kind).filter
    off = delivered = 0
    t0 = time.perf_counter()
    while off < n:
        r = store.get_message_sync(ConsumeRequest("G", TOPIC, 0, True, off, 32).read(None, f))
        delivered += r.message_count
        off = r.next_begin_offset
    return time.perf_counter() - t0, delivered


async def _pull_arm(client: RemotingClient, addr: str, n: int, expr: str, kind: str) -> tuple[float, int]:
    off = delivered = 0
    t0 = time.perf_counter()
    while off < n:
        got, off = await _pull_once(client, addr, off, expr, kind)
        delivered += got
    return time.perf_counter() - t0, delivered


async def _pull_once(client: RemotingClient, addr: str, off: int, expr: str, kind: str) -> tuple[int, int]:
    """One pull of up to 32 from ``off``: (messages delivered, next offset)."""
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
    delivered = resp.body.count(b"\x02a\x01") if resp.body else 0  # one per message (property a)
    return delivered, int(resp.ext_fields["nextBeginOffset"])


PAIR = (("unfiltered", "*", "TAG"), ("sql match all", "a >= 0", "SQL92"))


async def _paired(level: str, n: int, rounds: int, step: Callable[[int, int], Awaitable[tuple[int, int]]]) -> None:
    """The figure to meet, with the noise of a shared machine cancelled: every get/pull of 32 done twice in a row,
    once unfiltered and once by "a >= 0" (which order alternates), the time of each summed per arm."""
    spent: list[list[float]] = [[], []]
    got = [0, 0]
    for r in range(rounds):
        off = 0
        while off < n:
            nxt = set()
            for k in (0, 1) if (off // 32 + r) % 2 == 0 else (1, 0):
                t0 = time.perf_counter()
                d, after = await step(k, off)
                spent[k].append(time.perf_counter() - t0)
                got[k] += d
                nxt.add(after)
            [off] = nxt  # both read the same messages
    if got[0] != got[1]:
        raise RuntimeError(f"the paired arms delivered {got}")
    per = got[0] / len(spent[0])  # messages per get
    med = [statistics.median(t) for t in spent]  # a neighbour's preemption lands on one get: medians ignore it
    print(
        f"{level:5} paired, {rounds} passes, median get: unfiltered {per / med[0]:>10,.0f}/s, sql match all "
        f"{per / med[1]:>10,.0f}/s: ratio {med[0] / med[1]:.3f} (sums: {sum(spent[0]) / sum(spent[1]):.3f})",
        flush=True,
    )


def _line(level: str, name: str, n: int, times: list[float], delivered: int) -> float:
    dt = statistics.median(times)
    per = dt / delivered * 1e6 if delivered else float("nan")
    print(
        f"{level:5} {name:30} scanned {n / dt:>10,.0f}/s  delivered {delivered / dt:>10,.0f}/s"
        f"  {per:6.2f} µs/delivered  (median of {len(times)})",
        flush=True,
    )
    return delivered / dt


async def _alternate(
    level: str,
    n: int,
    rounds: int,
    arm: Callable[[str, str], Awaitable[tuple[float, int]]],
    forget: Callable[[str], None],
) -> None:
    """Every arm once per round (reversed every other round), then the medians per arm and the ratios to meet."""
    runs: dict[str, list[tuple[float, int]]] = {name: [] for name, _e, _k in ARMS}
    for r in range(rounds):
        for name, expr, kind in ARMS if r % 2 == 0 else ARMS[::-1]:
            if name == COLD:
                forget(f"SQL92:{expr}")
            runs[name].append(await arm(expr, kind))
    rate = {name: _line(level, name, n, [t for t, _ in runs[name]], runs[name][0][1]) for name, _e, _k in ARMS}
    base = rate["unfiltered"]
    print(
        f"{level:5} delivered rate / unfiltered: sql match all {rate['sql match all'] / base:.2f}, "
        f"cold first read {rate[COLD] / base:.2f}",
        flush=True,
    )


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    from tests.harness import run_broker  # the in-process broker of the test suite, on a free port

    with tempfile.TemporaryDirectory() as tmp:
        async with run_broker(None, Path(tmp), enablePropertyFilter=True) as broker:
            store = broker.store
            assert store is not None
            plain = TOPIC + "Plain"
            for topic in (TOPIC, plain):
                broker.topics.create_if_absent(topic, 1, 6)
                await _fill(store, topic, 0, 1)
            for _name, expr, kind in ARMS:  # every selector subscribes before the producer sends the rest
                _get(store, TOPIC, 0, expr, kind)
            t_judged = await _fill(store, TOPIC, 1, a.messages)
            t_plain = await _fill(store, plain, 1, a.messages)
            store.delete_topics([plain])
            sql = sum(1 for _n, _e, kind in ARMS if kind == "SQL92")
            print(f"{a.messages} messages of {len(BODY)} B, 32 per get/pull, rounds={a.rounds}")
            print(
                f"fill  no selector registered {a.messages / t_plain:>10,.0f}/s, {sql} selectors judged at dispatch "
                f"{a.messages / t_judged:>10,.0f}/s ({(t_judged - t_plain) / a.messages / sql * 1e6:.2f} µs per "
                "message per selector)",
                flush=True,
            )

            def forget(key: str) -> None:
                store.dispatcher.marks.drop(TOPIC, key)

            async def by_store(expr: str, kind: str) -> tuple[float, int]:
                return _store_arm(store, a.messages, expr, kind)

            await _alternate("store", a.messages, a.rounds, by_store, forget)
            pair_filters = [build_subscription(TOPIC, e, 0, k).filter for _n, e, k in PAIR]

            async def store_step(k: int, off: int) -> tuple[int, int]:
                f = pair_filters[k]
                r = store.get_message_sync(ConsumeRequest("G", TOPIC, 0, True, off, 32).read(None, f))
                return r.message_count, r.next_begin_offset

            await _paired("store", a.messages, a.rounds, store_step)
            client = RemotingClient()
            try:

                async def by_pull(expr: str, kind: str) -> tuple[float, int]:
                    return await _pull_arm(client, broker.addr, a.messages, expr, kind)

                await _alternate("pull", a.messages, a.rounds, by_pull, forget)

                async def pull_step(k: int, off: int) -> tuple[int, int]:
                    return await _pull_once(client, broker.addr, off, PAIR[k][1], PAIR[k][2])

                await _paired("pull", a.messages, a.rounds, pull_step)
            finally:
                await client.close()


if __name__ == "__main__":
    asyncio.run(main())
