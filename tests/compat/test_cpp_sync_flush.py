"""The official C++ client (librocketmq) against a SYNC_FLUSH broker, whose sends are answered by the group commit
(deferred replies, written when the fsync covering them returns): sync, async and oneway sends all succeed and a
push consumer gets every message exactly as sent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.compat.test_cpp_client import send_every_way_then_consume
from tests.servers import Servers, start_servers


@pytest.fixture(scope="module")
def sync_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    with start_servers(tmp_path_factory.mktemp("compat-sync"), broker_extra="flushDiskType=SYNC_FLUSH\n") as s:
        yield s


def test_cpp_sends_to_a_sync_flush_broker_are_all_acknowledged_and_delivered(sync_servers: Servers) -> None:
    send_every_way_then_consume(sync_servers, "CompatSync", "CID_sync")
