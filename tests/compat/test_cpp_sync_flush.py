"""The official C++ client (librocketmq) against a SYNC_FLUSH broker, whose sends are answered by the group commit
(deferred replies, written when the fsync covering them returns): sync, async and oneway sends all succeed and a
push consumer gets every message exactly as sent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.compat.test_cpp_client import Consumer, N, expected, produce, wait_total
from tests.servers import Servers, start_servers


@pytest.fixture(scope="module")
def sync_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    with start_servers(tmp_path_factory.mktemp("compat-sync"), broker_extra="flushDiskType=SYNC_FLUSH\n") as s:
        yield s


def test_cpp_sends_to_a_sync_flush_broker_are_all_acknowledged_and_delivered(sync_servers: Servers) -> None:
    for mode in ("sync", "async", "oneway"):
        done = produce(sync_servers, "CompatSync", mode, mode)
        assert done["ok"] == N and done["failed"] == 0, done
    c = Consumer(sync_servers, "CompatSync", "CID_sync", "sync")
    try:
        wait_total([c], 3 * N, 90)
    finally:
        c.stop()
    by_key = {m["keys"]: m for m in c.msgs}
    for mode in ("sync", "async", "oneway"):
        for i in range(N):
            want = expected(mode, i)
            got = by_key[want["keys"]]
            assert (got["body"], got["tags"], got["props"]) == (want["body"], want["tags"], want["props"])
