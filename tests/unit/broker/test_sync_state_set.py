"""A controller-mode master's SyncStateSet rules (``broker.ha.sync_state``): which offset counts as confirmed under
``inSyncReplicas`` / ``allAckInSyncStateSet``, when a replica joins (its ack reaches the confirm offset and the
current epoch), when one leaves (gone, or not caught up for ``haMaxTimeSlaveNotCatchup``), and that a change the
controller refused is not re-sent on every ack."""

from __future__ import annotations

import time

from broker.ha.state import SlaveLink
from broker.ha.sync_state import AckRule, SyncStateTracker


def _tracker(rule: AckRule, end: list[int], reports: list[set[int]], epoch_start: int = 0) -> SyncStateTracker:
    t = SyncStateTracker(rule, lambda: 1, lambda: epoch_start, lambda: end[0], reports.append)
    t.adopt(frozenset({1, 2, 3}), 5)
    return t


def _link(bid: int, ack: int, caught_up_at: float | None = None) -> SlaveLink:
    return SlaveLink(
        f"127.0.0.1:{bid}",
        ack_offset=ack,
        broker_id=bid,
        caught_up_at=time.time() if caught_up_at is None else caught_up_at,
    )


def test_confirmed_offset_follows_the_ack_rule() -> None:
    end, reports = [1000], []
    links = [_link(2, 900), _link(3, 700), _link(4, 1000)]  # 4 is not in the set: its ack does not count
    one = _tracker(AckRule(in_sync_replicas=1), end, reports)
    assert not one.needs_slaves() and one.confirmed(links, 1000) == 1000
    two = _tracker(AckRule(in_sync_replicas=2), end, reports)
    assert two.needs_slaves() and two.confirmed(links, 1000) == 900  # the best member
    all_ack = _tracker(AckRule(all_ack=True), end, reports)
    assert all_ack.confirmed(links, 1000) == 700  # every member
    assert all_ack.confirmed(links[:1], 1000) == -1  # a member not connected: nothing is confirmed
    assert all_ack.confirm_offset(links, 1000) == 700


def test_a_caught_up_replica_joins_once_and_a_refusal_holds_it_back() -> None:
    end, reports = [1000], []
    t = _tracker(AckRule(), end, reports, epoch_start=100)
    t.adopt(frozenset({1, 2}), 6)
    members = [_link(2, 1000)]
    t.confirmed(members, 1000)
    behind = _link(3, 500)
    t.on_ack(behind)
    assert reports == []  # below the confirm offset (1000)
    level = _link(3, 1000)
    t.on_ack(level)
    assert reports == [{1, 2, 3}]
    t.on_ack(level)
    assert len(reports) == 1  # pending: not sent again
    t.refused(60.0)
    t.on_ack(level)
    assert len(reports) == 1  # held back after the controller refused
    t.hold_until = 0.0
    t.on_ack(level)
    assert len(reports) == 2
    assert t.adopt(frozenset({1, 2, 3}), 7) and not t.adopt(frozenset({1, 2}), 6)  # an older set epoch is ignored


def test_lagging_or_gone_members_leave() -> None:
    end, reports = [1000], []
    t = _tracker(AckRule(max_not_catchup_s=15.0), end, reports)
    fresh = _link(2, 1000)
    stale = _link(3, 400, caught_up_at=time.time() - 60)
    assert t.shrunk([fresh, stale]) == {1, 2}
    assert t.shrunk([fresh]) == {1, 2}  # 3 not connected
    assert t.shrunk([fresh, _link(3, 1000)]) is None


def test_confirm_offset_holds_while_a_member_is_not_connected() -> None:
    end, reports = [1000], []
    t = _tracker(AckRule(all_ack=True), end, reports)
    assert t.confirm_offset([_link(2, 900), _link(3, 800)], 1000) == 800
    # every slave connection dropped (a master cut off, then healed before it learns it was deposed): what only this
    # master holds stays unreadable — the bound does not jump to its end
    assert t.confirm_offset([], 1200) == 800
    assert t.confirm_offset([_link(2, 1200)], 1200) == 800  # one member back: the other still unknown
    assert t.confirm_offset([_link(2, 1200), _link(3, -1)], 1200) == 800  # connected, not reported yet
    assert t.confirm_offset([_link(2, 1200), _link(3, 1100)], 1200) == 1100  # both report: it moves again
    t.adopt(frozenset({1}), 6)  # the controller shrank the set to this master alone
    assert t.confirm_offset([], 1300) == 1300
