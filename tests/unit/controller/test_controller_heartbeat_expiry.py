"""The controller's heartbeat table: a broker is live until its last heartbeat plus its own timeout, and the table
says when the first one runs out, so the expiry scan wakes then instead of up to one scan interval later."""

from __future__ import annotations

from controller.heartbeat import Heartbeat, HeartbeatTable


def test_next_expiry_is_the_earliest_last_heartbeat_plus_timeout() -> None:
    now = [1_000]
    table = HeartbeatTable(lambda: now[0])
    assert table.next_expiry_ms() is None
    table.on_heartbeat(Heartbeat("c", "g", "10.0.0.1:10911", 1, timeout_ms=10_000), None)
    now[0] = 3_000
    table.on_heartbeat(Heartbeat("c", "g", "10.0.0.2:10911", 2, timeout_ms=4_000), None)
    assert table.next_expiry_ms() == 7_000  # broker 2: 3 000 + 4 000, before broker 1's 11 000
    now[0] = 7_000
    assert table.expire() == []  # live up to and including its deadline
    now[0] = 7_001
    assert [key for key, _ in table.expire()] == [("c", "g", 2)]
    assert table.next_expiry_ms() == 11_000
    table.on_heartbeat(Heartbeat("c", "g", "10.0.0.1:10911", 1, timeout_ms=10_000), None)
    assert table.next_expiry_ms() == 17_001  # a heartbeat moves the deadline
