"""The official C++ client (PyPI ``rocketmq`` 0.4.4) against our name server and broker, all separate processes.

The servers run as ``python -m namesrv`` / ``python -m broker`` on free ports with config files under a temporary
directory (``tests.servers``); the C++ client runs in ``tests/compat/cpp_driver.py`` (librocketmq is not fork-safe and can take its host
process down) and reports JSON lines. Waits are on those lines and on broker replies, each with a generous deadline —
the C++ client rebalances every 10–20 s and persists offsets every 5 s — never fixed sleeps.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from protocol.codes import RequestCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.compat.cpp_support import Consumer, N, produce, received, send_every_way_then_consume
from tests.eventually import eventually_sync
from tests.servers import Servers

pytestmark = pytest.mark.compat


def test_sync_async_oneway_then_push_consumer_gets_everything(servers: Servers) -> None:
    send_every_way_then_consume(servers, "CompatAll", "CID_all")


def test_two_consumers_split_queues_exactly_once(servers: Servers) -> None:
    produce(servers, "CompatSplit", "sync", "warm", 4)  # creates the topic (4 queues)
    a = Consumer(servers, "CompatSplit", "CID_split", "a")
    b = Consumer(servers, "CompatSplit", "CID_split", "b")
    try:

        async def members() -> int:
            client = RemotingClient()
            try:
                cmd = RemotingCommand.request(RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": "CID_split"})
                resp = await client.invoke(servers.broker_addr, cmd, 3.0)
                return len(json.loads(resp.body)["consumerIdList"]) if resp.code == 0 else 0
            finally:
                await client.close()

        eventually_sync(lambda: asyncio.run(members()) >= 2, timeout=60, what="both consumers registered")
        eventually_sync(lambda: len(received([a, b])) >= 4, timeout=60, what="the warm-up messages")
        done = produce(servers, "CompatSplit", "sync", "split")
        assert done["ok"] == N
        eventually_sync(lambda: len(received([a, b])) >= N + 4, timeout=90, what=f"{N + 4} distinct messages")
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
        eventually_sync(lambda: len(received([c])) >= 200, timeout=90, what="the first 200 messages")
    finally:
        c.stop()  # the C++ consumer commits its offsets on shutdown
    produce(servers, "CompatResume", "sync", "second", 200)
    again = Consumer(servers, "CompatResume", "CID_resume", "r2")
    try:
        eventually_sync(
            lambda: len({k for k in received([again]) if k.startswith("second-")}) >= 200,
            timeout=90,
            what="the new messages at the restarted consumer",
        )
    finally:
        again.stop()
    old = [m for m in again.msgs if m["keys"].startswith("first-")]
    assert old == [], f"{len(old)} already-committed messages were delivered again"
