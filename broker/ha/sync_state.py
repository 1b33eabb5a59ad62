"""A controller-mode master's SyncStateSet (J ``AutoSwitchHAService``): the replicas (broker ids, this master
included) that hold everything confirmed, and the SYNC rule that reads it.

* **Shrink** (``shrunk``, every ``checkSyncStateSetPeriod``): a member that is not connected, or whose last
  catch-up (its ack reached the master's end as of some moment, ``SlaveLink.caught_up_at``) is older than
  ``haMaxTimeSlaveNotCatchup``, leaves.
* **Expand** (``on_ack``, at once): a connected replica outside the set whose ack reaches the confirm offset (the
  smallest ack over the set's members, the master's end when alone) and the start of the current epoch joins.
* Either change goes to the controller as ALTER_SYNC_STATE_SET (``report``), which answers the new set and epoch;
  until then the set in force is the old one (J's ``markSynchronizingSyncStateSet`` keeps the union meanwhile for
  acks; here the old set is kept: a put is never confirmed by a replica the controller has not accepted).
* **Acks** (``confirmed``): a put waiting for replication (SYNC, ``WAIT=true``) is confirmed once ``needed - 1``
  members other than the master acked its end — ``needed`` = the whole set with ``allAckInSyncStateSet``, else
  ``inSyncReplicas``. With ``needed <= 1`` (the default) nothing is waited for.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from broker.ha.state import SlaveLink

_log = logging.getLogger("rocketq.broker.ha.sync_state")


@dataclass(frozen=True, slots=True)
class AckRule:
    in_sync_replicas: int = 1
    all_ack: bool = False
    max_not_catchup_s: float = 15.0


class SyncStateTracker:
    def __init__(
        self,
        rule: AckRule,
        local_id: Callable[[], int],
        epoch_start: Callable[[], int],
        master_end: Callable[[], int],
        report: Callable[[set[int]], None],
    ) -> None:
        self._master_end = master_end
        self.rule = rule
        self._local_id = local_id
        self._epoch_start = epoch_start
        self._report = report
        self.members: frozenset[int] = frozenset()
        self.epoch = 0
        self._links: list[SlaveLink] = []
        self._pending: frozenset[int] | None = None  # a change sent to the controller, not answered yet
        self.hold_until = 0.0  # monotonic: no expansion before (set after a refused change)
        self._held = 0  # the last confirm offset: the bound while a member is not connected

    def adopt(self, members: frozenset[int], epoch: int) -> bool:
        """The controller's set (register / replica info / alter reply / role notification); True if it changed."""
        if epoch < self.epoch or (epoch == self.epoch and members == self.members):
            return False
        self.members, self.epoch = members, epoch
        self._pending = None
        return True

    def _needed(self) -> int:
        return len(self.members) if self.rule.all_ack else self.rule.in_sync_replicas

    # -- AckPolicy (broker.ha.master) --------------------------------------------------------------------------------

    def needs_slaves(self) -> bool:
        return self._needed() > 1

    def confirmed(self, links: list[SlaveLink], end: int) -> int:
        self._links = links
        need = self._needed() - 1
        if need <= 0:
            return end
        local = self._local_id()
        acks = sorted(
            (lk.ack_offset for lk in links if lk.broker_id in self.members and lk.broker_id != local), reverse=True
        )
        return acks[need - 1] if len(acks) >= need else -1

    def confirm_offset(self, links: list[SlaveLink], end: int) -> int:
        """J's confirmOffset: the smallest ack over the set's members (the master's end when alone). A member that is
        not connected (or has not acked yet) holds it where it was: what that member has is unknown, and a master
        whose slaves' connections all dropped (cut off, then healed just before it learns it was deposed) must not
        let consumers read records no one else holds."""
        local = self._local_id()
        acks = {
            lk.broker_id: lk.ack_offset
            for lk in links
            if lk.broker_id in self.members and lk.broker_id != local and lk.ack_offset >= 0
        }
        value = min([end, *acks.values()])
        if any(m != local and m not in acks for m in self.members):
            value = min(value, self._held)
        self._held = value
        return value

    def on_ack(self, link: SlaveLink) -> None:
        """Expand: a replica outside the set that has caught up joins (reported at once)."""
        if link.broker_id < 0 or link.broker_id in self.members or self._pending is not None:
            return
        if time.monotonic() < self.hold_until:  # the controller refused the last change: not on every ack
            return
        links = self._links if link in self._links else [*self._links, link]
        confirm = self.confirm_offset(links, self._master_end())
        if link.ack_offset >= confirm and link.ack_offset >= self._epoch_start():
            new = set(self.members) | {link.broker_id, self._local_id()}
            _log.info(
                "replica %d caught up (ack %d): SyncStateSet %s → %s",
                link.broker_id,
                link.ack_offset,
                sorted(self.members),
                sorted(new),
            )
            self._pending = frozenset(new)
            self._report(new)

    def shrunk(self, links: list[SlaveLink]) -> set[int] | None:
        """The set without members that are gone or lagging; None when nothing changes."""
        local = self._local_id()
        now = time.time()
        by_id = {lk.broker_id: lk for lk in links if lk.broker_id >= 0}
        new = {local}
        for bid in self.members:
            if bid == local:
                continue
            lk = by_id.get(bid)
            if lk is None:
                continue
            if now - lk.caught_up_at > self.rule.max_not_catchup_s:
                continue
            new.add(bid)
        if new == set(self.members):
            return None
        return new

    def refused(self, hold_s: float) -> None:
        """The controller refused the change: try again after ``hold_s`` (the next ack past it)."""
        self._pending = None
        self.hold_until = time.monotonic() + hold_s
