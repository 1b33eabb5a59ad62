"""The official C++ client (librocketmq) against a SYNC_FLUSH broker, whose sends are answered by the group commit
(deferred replies, written when the fsync covering them returns): sync, async and oneway sends all succeed and a
push consumer gets every message exactly as sent."""

from __future__ import annotations

from tests.compat.cpp_support import send_every_way_then_consume
from tests.servers import Servers

BROKER_CONF = "flushDiskType=SYNC_FLUSH\n"  # the servers fixture's broker


def test_cpp_sends_to_a_sync_flush_broker_are_all_acknowledged_and_delivered(servers: Servers) -> None:
    send_every_way_then_consume(servers, "CompatSync", "CID_sync")
