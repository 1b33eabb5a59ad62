"""The official C++ client against our servers: batch sends, delay levels, bodies the C++ producer
compresses (read back by the C++ consumer and by ours), and a push consumer with a tag expression."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from tests.compat.cpp_driver import make_body
from tests.compat.cpp_support import FAST_LEVELS, Consumer, expected, produce, received
from tests.compat.sdk_support import consume_ours
from tests.eventually import eventually_sync
from tests.servers import Servers

pytestmark = pytest.mark.compat

BROKER_CONF = FAST_LEVELS


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


def test_send_batch_reaches_the_push_consumer_whole(servers: Servers) -> None:
    n = 45  # four batches of ten and one of five
    done = produce(servers, "CompatBatch", "batch", "bt", n)
    assert done["ok"] == n and done["failed"] == 0, done
    c = Consumer(servers, "CompatBatch", "CID_batch", "batch")
    try:
        eventually_sync(lambda: len(received([c])) >= n, timeout=90, what=f"{n} messages")
    finally:
        c.stop()
    got = {m["keys"]: m for m in c.msgs}
    for i in range(n):
        want = expected("bt", i)
        m = got[want["keys"]]
        assert (m["body"], m["tags"], m["props"], m["topic"]) == (
            want["body"],
            want["tags"],
            want["props"],
            "CompatBatch",
        )
    # a batch goes to one queue, its messages at consecutive offsets
    by_queue: dict[int, list[int]] = {}
    for m in c.msgs:
        by_queue.setdefault(m["queue_id"], []).append(m["offset"])
    for offsets in by_queue.values():
        assert sorted(offsets) == list(range(min(offsets), min(offsets) + len(offsets)))


def test_a_delay_level_holds_the_message_back_then_delivers_it_to_its_topic(servers: Servers) -> None:
    c = Consumer(servers, "CompatDelay", "CID_delay", "delay")
    try:
        done = produce(servers, "CompatDelay", "sync", "dl", 6, "--delay", "3")
        assert done["ok"] == 6, done
        eventually_sync(lambda: len(received([c])) >= 6, timeout=90, what="6 messages")
    finally:
        c.stop()
    for m in c.msgs:
        assert m["topic"] == "CompatDelay" and m["body"].startswith("dl-body-")
        # every level is 1 s on this broker: re-stored from SCHEDULE_TOPIC_XXXX no earlier than that
        assert m["store_ts"] - m["born_ts"] >= 1000, m


def test_bodies_the_cpp_producer_compresses_come_back_intact_to_both_consumers(servers: Servers) -> None:
    n, size = 8, 64 * 1024  # over compressMsgBodyOverHowmuch (4 KiB)
    done = produce(servers, "CompatBig", "sync", "big", n, "--body-size", str(size))
    assert done["ok"] == n, done
    c = Consumer(servers, "CompatBig", "CID_big_cpp", "big")
    try:
        eventually_sync(lambda: len(received([c])) >= n, timeout=90, what=f"{n} messages")
    finally:
        c.stop()
    want = {f"big-key-{i}": sha(make_body("big", i, size)) for i in range(n)}
    assert {m["keys"]: m["body_sha"] for m in c.msgs} == want
    assert all(m["body_len"] == size for m in c.msgs)
    ours = asyncio.run(consume_ours(servers.ns_addr, "CompatBig", n, "CID_big_py"))
    assert {k: sha(m.body) for k, m in ours.items()} == want


def test_a_tag_expression_delivers_only_those_tags(servers: Servers) -> None:
    n, markers = 30, 8  # TagA, TagB, TagC in turn
    assert produce(servers, "CompatTags", "sync", "tg", n)["ok"] == n
    c = Consumer(servers, "CompatTags", "CID_tags", "tags", "--expr", "TagA || TagC")
    try:
        eventually_sync(lambda: len(received([c])) >= 20, timeout=90, what="20 messages")
        # markers after everything, on every queue: once they are in, any TagB let through would be in too
        assert produce(servers, "CompatTags", "sync", "tz", markers)["ok"] == markers
        total = 20 + sum(1 for i in range(markers) if i % 3 != 1)
        eventually_sync(lambda: len(received([c])) >= total, timeout=90, what=f"{total} messages with the markers")
        c.drain()
    finally:
        c.stop()
    keys = [m["keys"] for m in c.msgs]
    want = {f"tg-key-{i}" for i in range(n) if i % 3 != 1} | {f"tz-key-{i}" for i in range(markers) if i % 3 != 1}
    assert set(keys) == want
    assert {m["tags"] for m in c.msgs} == {"TagA", "TagC"}
