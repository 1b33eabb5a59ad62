"""The official C++ client (PyPI ``rocketmq`` 0.4.4) against our name server and broker, all separate processes.

The servers run as ``python -m namesrv`` / ``python -m broker`` on free ports with config files under a temporary
directory (``tests.servers``); the C++ client runs in ``tests/compat/cpp_driver.py`` (librocketmq is not fork-safe and can take its host
process down) and reports JSON lines. Waits are on those lines and on broker replies, each with a generous deadline —
the C++ client rebalances every 10–20 s and persists offsets every 5 s — never fixed sleeps.
"""

from __future__ import annotations

import json
import queue
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.servers import Proc, Servers, start_servers

pytestmark = pytest.mark.compat

DRIVER = Path(__file__).with_name("cpp_driver.py")
N = 1000


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    with start_servers(tmp_path_factory.mktemp("compat")) as s:
        yield s


def driver(servers: Servers, *args: str, name: str) -> Proc:
    return Proc([sys.executable, str(DRIVER), *args, "--namesrv", servers.ns_addr], servers.tmp / f"{name}.log")


def produce(servers: Servers, topic: str, mode: str, prefix: str, count: int = N, *extra: str) -> dict[str, Any]:
    p = driver(
        servers,
        "produce",
        "--topic",
        topic,
        "--mode",
        mode,
        "--prefix",
        prefix,
        "--count",
        str(count),
        *extra,
        name=f"produce-{topic}-{prefix}",
    )
    try:
        done = json.loads(p.wait_line(lambda ln: '"event":"done"' in ln, 120))
    finally:
        p.stop()
    return done  # type: ignore[no-any-return]


class Consumer:
    def __init__(self, servers: Servers, topic: str, group: str, name: str, *extra: str) -> None:
        self.proc = driver(
            servers, "consume", "--topic", topic, "--group", group, "--instance", name, *extra, name=name
        )
        self.msgs: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []
        # messages can be delivered before the driver prints "started": keep them while waiting for it
        self.proc.wait_line(lambda ln: self._take(ln) or '"event":"started"' in ln, 30)

    def _take(self, line: str) -> bool:
        """Record a message line; True for the final "stopped" line."""
        try:
            ev = json.loads(line)
        except ValueError:
            return False
        if ev.get("event") == "msg":
            self.msgs.append(ev)
        elif ev.get("event") == "failed":
            self.failed.append(ev)
        return ev.get("event") == "stopped"

    def drain(self) -> None:
        while True:
            try:
                self._take(self.proc.lines.get_nowait())
            except queue.Empty:
                return

    def stop(self) -> None:
        if self.proc.p.poll() is None:
            self.proc.p.stdin.close()  # type: ignore[union-attr]
            self.proc.wait_line(self._take, 60)
        self.proc.stop()


def wait_total(consumers: list[Consumer], want: int, deadline: float) -> None:
    end = time.monotonic() + deadline
    while True:
        for c in consumers:
            c.drain()
        total = len({m["keys"] for c in consumers for m in c.msgs})
        if total >= want:
            return
        assert time.monotonic() < end, f"received {total} distinct of {want} within {deadline}s"
        time.sleep(0.05)


def expected(prefix: str, i: int) -> dict[str, Any]:
    return {
        "keys": f"{prefix}-key-{i}",
        "body": f"{prefix}-body-{i}",
        "tags": ("TagA", "TagB", "TagC")[i % 3],
        "props": {"seq": str(i), "origin": "cpp"},
    }


def send_every_way_then_consume(servers: Servers, topic: str, group: str) -> None:
    """N sync, N async and N oneway sends from the C++ producer all succeed, and a C++ push consumer gets every
    message exactly as sent."""
    for mode in ("sync", "async", "oneway"):
        done = produce(servers, topic, mode, mode)
        assert done["ok"] == N and done["failed"] == 0, done
    c = Consumer(servers, topic, group, group)
    try:
        wait_total([c], 3 * N, 90)
    finally:
        c.stop()
    by_key = {m["keys"]: m for m in c.msgs}
    for mode in ("sync", "async", "oneway"):
        for i in range(N):
            want = expected(mode, i)
            got = by_key[want["keys"]]
            assert (got["body"], got["tags"], got["props"], got["topic"]) == (
                want["body"],
                want["tags"],
                want["props"],
                topic,
            )


def test_sync_async_oneway_then_push_consumer_gets_everything(servers: Servers) -> None:
    send_every_way_then_consume(servers, "CompatAll", "CID_all")


def test_two_consumers_split_queues_exactly_once(servers: Servers) -> None:
    from protocol.codes import RequestCode
    from protocol.command import RemotingCommand

    produce(servers, "CompatSplit", "sync", "warm", 4)  # creates the topic (4 queues)
    a = Consumer(servers, "CompatSplit", "CID_split", "a")
    b = Consumer(servers, "CompatSplit", "CID_split", "b")
    try:
        import asyncio

        from protocol.remoting import RemotingClient

        async def members() -> int:
            client = RemotingClient()
            try:
                cmd = RemotingCommand.request(RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": "CID_split"})
                resp = await client.invoke(servers.broker_addr, cmd, 3.0)
                return len(json.loads(resp.body)["consumerIdList"]) if resp.code == 0 else 0
            finally:
                await client.close()

        end = time.monotonic() + 60
        while asyncio.run(members()) < 2:
            assert time.monotonic() < end, "both consumers never registered"
            time.sleep(0.1)
        wait_total([a, b], 4, 60)  # the warm-up messages
        done = produce(servers, "CompatSplit", "sync", "split")
        assert done["ok"] == N
        wait_total([a, b], N + 4, 90)
    finally:
        a.stop()
        b.stop()
    split = [m["keys"] for c in (a, b) for m in c.msgs if m["keys"].startswith("split-")]
    assert len(split) == N and len(set(split)) == N, "every message exactly once"
    queues_a = {m["queue_id"] for m in a.msgs if m["keys"].startswith("split-")}
    queues_b = {m["queue_id"] for m in b.msgs if m["keys"].startswith("split-")}
    assert queues_a and queues_b and not queues_a & queues_b


def test_restarted_consumer_resumes_from_committed_offset(servers: Servers) -> None:
    produce(servers, "CompatResume", "sync", "first", 200)
    c = Consumer(servers, "CompatResume", "CID_resume", "r1")
    try:
        wait_total([c], 200, 90)
    finally:
        c.stop()  # the C++ consumer commits its offsets on shutdown
    produce(servers, "CompatResume", "sync", "second", 200)
    again = Consumer(servers, "CompatResume", "CID_resume", "r2")
    try:
        end = time.monotonic() + 90
        while len({m["keys"] for m in again.msgs if m["keys"].startswith("second-")}) < 200:
            assert time.monotonic() < end, "restarted consumer did not get the new messages"
            again.drain()
            time.sleep(0.05)
    finally:
        again.stop()
    old = [m for m in again.msgs if m["keys"].startswith("first-")]
    assert old == [], f"{len(old)} already-committed messages were delivered again"
