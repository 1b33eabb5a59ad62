"""The official C++ client's other two consumers: its PullConsumer (route → PULL_MESSAGE with a tag expression,
offsets kept by the caller) and its PushConsumer in BROADCASTING mode (offsets in a local file; every consumer of
the group gets every message) against our name server and broker."""

from __future__ import annotations

import itertools
import json

import pytest

from tests.compat.cpp_support import Consumer, driver, expected, produce
from tests.eventually import eventually_sync
from tests.servers import Servers

pytestmark = pytest.mark.compat
N = 60


def cpp_pull(servers: Servers, topic: str, group: str, expr: str) -> list[dict[str, object]]:
    p = driver(servers, "pull", "--topic", topic, "--group", group, "--expr", expr, name=f"pull-{group}")
    msgs: list[dict[str, object]] = []

    def take(line: str) -> bool:
        ev = json.loads(line) if line.startswith("{") else {}
        if ev.get("event") == "msg":
            msgs.append(ev)
        return ev.get("event") == "done"

    try:
        done = json.loads(p.wait_line(take, 60))
    finally:
        p.stop()
    assert done["count"] == len(msgs)
    return msgs


def test_cpp_pull_consumer_reads_everything_and_filters_by_tag(servers: Servers) -> None:
    assert produce(servers, "CompatPull", "sync", "p", count=N)["ok"] == N
    everything = cpp_pull(servers, "CompatPull", "CID_pull_all", "*")
    assert sorted(m["keys"] for m in everything) == sorted(expected("p", i)["keys"] for i in range(N))
    for m in everything:
        i = int(str(m["keys"]).rsplit("-", 1)[1])
        want = expected("p", i)
        assert (m["body"], m["tags"], m["props"], m["topic"]) == (
            want["body"],
            want["tags"],
            want["props"],
            "CompatPull",
        )
    # per queue, offsets 0.. in order, as the broker assigned them
    for q in {m["queue_id"] for m in everything}:
        offs = [m["offset"] for m in everything if m["queue_id"] == q]
        assert offs == list(range(len(offs)))
    tag_a = cpp_pull(servers, "CompatPull", "CID_pull_a", "TagA")
    assert sorted(m["keys"] for m in tag_a) == sorted(expected("p", i)["keys"] for i in range(0, N, 3))


def test_cpp_broadcasting_consumers_each_get_everything(servers: Servers) -> None:
    topic = "CompatBroadcast"
    assert produce(servers, topic, "sync", "warm", count=4)["ok"] == 4  # the topic and its route exist
    consumers = [Consumer(servers, topic, "CID_bcast", f"bcast-{i}", "--broadcast") for i in range(2)]
    try:
        # A broadcasting consumer with no local offset starts at each queue's max offset when it first pulls it,
        # so wait until both pull every queue: probes until each has seen a probe from all four queues.
        rounds = itertools.count()

        def probed_every_queue() -> bool:
            assert produce(servers, topic, "sync", f"probe{next(rounds)}", count=8)["ok"] == 8
            queues = [{m["queue_id"] for m in c.collect() if str(m["keys"]).startswith("probe")} for c in consumers]
            return all(q == {0, 1, 2, 3} for q in queues)

        eventually_sync(probed_every_queue, timeout=60, what="the broadcasting consumers pulling every queue")
        assert produce(servers, topic, "sync", "b", count=N)["ok"] == N
        want = {expected("b", i)["keys"] for i in range(N)}

        def got() -> list[set[str]]:
            return [{m["keys"] for m in c.collect()} & want for c in consumers]

        eventually_sync(
            lambda: all(g == want for g in got()),
            timeout=60,
            what=lambda: f"each consumer to get all {N}: got {[len(g) for g in got()]}",
        )
        for c in consumers:
            mine = [m for m in c.msgs if m["keys"] in want]
            assert len(mine) == N, "no message twice to the same broadcasting consumer"
    finally:
        for c in consumers:
            c.stop()
