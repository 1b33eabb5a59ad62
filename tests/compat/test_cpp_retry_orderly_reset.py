"""The official C++ client's retries, order and offset resets: RECONSUME_LATER comes back through the retry topic,
send_orderly keeps per-key order through an orderly push consumer, and a reset offset by timestamp reaches a running
consumer."""

from __future__ import annotations

import asyncio
import time

import pytest

from client.admin.admin_client import AdminClient
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import ResetOffsetRequestHeader
from protocol.remoting import RemotingClient
from tests.compat.cpp_support import FAST_LEVELS, Consumer, produce, received
from tests.eventually import eventually_sync
from tests.servers import Servers

pytestmark = pytest.mark.compat

BROKER_CONF = FAST_LEVELS


def test_reconsume_later_comes_back_with_reconsume_times_1(servers: Servers) -> None:
    assert produce(servers, "CompatRetry", "sync", "r", count=10)["ok"] == 10
    c = Consumer(servers, "CompatRetry", "CID_retry", "retry", "--fail-first")
    try:
        eventually_sync(lambda: len(received([c])) >= 10, timeout=90, what="10 redelivered messages")
    finally:
        c.stop()
    # The C++ client hands messages to the listener in small batches and sends a whole batch back when the
    # listener fails on one of them, so not every message is seen failing; every one must come back retried.
    assert c.failed and all(f["reconsume_times"] == 0 for f in c.failed)
    again = {m["keys"]: m for m in c.msgs}
    for i in range(10):
        m = again[f"r-key-{i}"]
        assert m["reconsume_times"] == 1
        assert m["body"] == f"r-body-{i}" and m["topic"] == "CompatRetry"
        assert m["props"] == {"seq": str(i), "origin": "cpp"}


def test_send_orderly_keeps_per_key_order_through_an_orderly_consumer(servers: Servers) -> None:
    c = Consumer(servers, "CompatOrder", "CID_order", "order", "--orderly")
    try:
        assert produce(servers, "CompatOrder", "orderly", "o", count=200)["ok"] == 200
        eventually_sync(lambda: len(c.collect()) >= 200, timeout=90, what="200 ordered messages")
    finally:
        c.stop()
    by_shard: dict[str, list[int]] = {}
    for m in c.msgs:
        by_shard.setdefault(m["shard"], []).append(int(m["props"]["seq"]))
    assert sorted(by_shard) == ["0", "1", "2", "3"]
    for shard, seqs in by_shard.items():
        assert seqs == sorted(seqs), f"shard {shard} out of order"


async def first_store_time(servers: Servers, topic: str, keys: list[str]) -> int:
    times: list[int] = []
    async with AdminClient(servers.ns_addr) as admin:
        for k in keys:
            times += [m.store_timestamp for m in await admin.query_by_key(topic, k)]
    return min(times)


async def reset(servers: Servers, topic: str, group: str, ts: int) -> RemotingCommand:
    client = RemotingClient()
    try:
        h = ResetOffsetRequestHeader(topic, group, ts, True)
        return await client.invoke(
            servers.broker_addr,
            RemotingCommand.request(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, h.to_ext_fields()),
            10,
        )
    finally:
        await client.close()


def test_reset_offset_by_timestamp_reaches_a_running_cpp_consumer(servers: Servers) -> None:
    assert produce(servers, "CompatReset", "sync", "a", count=20)["ok"] == 20
    c = Consumer(servers, "CompatReset", "CID_reset", "reset")
    try:
        eventually_sync(lambda: len(received([c])) >= 20, timeout=90, what="the first 20 messages")
        time.sleep(0.01)  # store timestamps are in ms: keep the two batches apart
        assert produce(servers, "CompatReset", "sync", "b", count=10)["ok"] == 10
        eventually_sync(lambda: len(received([c])) >= 30, timeout=90, what="the next 10 messages")
        # reset to the first b message's store time: the broker answers each queue's first message stored at or after
        # it (J 5.5, BoundaryType.LOWER), its first b
        mark = asyncio.run(first_store_time(servers, "CompatReset", [f"b-key-{i}" for i in range(10)]))
        before = len(c.msgs)
        resp = asyncio.run(reset(servers, "CompatReset", "CID_reset", mark))
        assert resp.code == ResponseCode.SUCCESS, resp.remark
        eventually_sync(
            lambda: len(c.collect()) >= before + 10,
            timeout=90,
            what="the 10 messages after the reset point again",
        )
    finally:
        c.stop()
    replayed = [m["keys"] for m in c.msgs[before:]]
    assert sorted(set(replayed)) == sorted(f"b-key-{i}" for i in range(10))
