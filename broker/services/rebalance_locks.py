"""RebalanceLockManager: which client holds each (consumer group, message queue) for orderly consumption
(J ``RebalanceLockManager``).

A lock belongs to one client id; it expires ``max_live_ms`` after its holder last locked it
(``REBALANCE_LOCK_MAX_LIVE_TIME``, 60 s; orderly consumers re-lock every 20 s). Locking a queue that is free, expired
or already held by the same client grants (and extends) it; a queue held by another live client is refused.
Unlocking releases only the caller's own locks. State is in memory only, as in J: after a broker restart every
queue is free and the consumers re-lock within one period.

Touched only from the event loop; no locks needed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import structlog

_log = structlog.get_logger("rocketq.broker.locks")

REBALANCE_LOCK_MAX_LIVE_TIME_MS = 60_000

MQ = tuple[str, str, int]  # (topic, brokerName, queueId)


@dataclass(slots=True)
class _Lock:
    client_id: str
    last_update: float

    def expired(self, now: float, max_live_s: float) -> bool:
        return now - self.last_update > max_live_s


class RebalanceLockManager:
    def __init__(
        self, max_live_ms: int = REBALANCE_LOCK_MAX_LIVE_TIME_MS, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_live_ms = max_live_ms
        self._clock = clock
        self._table: dict[str, dict[MQ, _Lock]] = {}

    def is_locked(self, group: str, mq: MQ, client_id: str) -> bool:
        lock = self._table.get(group, {}).get(mq)
        return (
            lock is not None
            and lock.client_id == client_id
            and not lock.expired(self._clock(), self.max_live_ms / 1000)
        )

    def holder(self, group: str, mq: MQ) -> str | None:
        lock = self._table.get(group, {}).get(mq)
        if lock is None or lock.expired(self._clock(), self.max_live_ms / 1000):
            return None
        return lock.client_id

    def try_lock_batch(self, group: str, mqs: Iterable[MQ], client_id: str) -> list[MQ]:
        """Grant or extend each queue that is free, expired or already ours; return the granted ones in order."""
        now = self._clock()
        max_live = self.max_live_ms / 1000
        locks = self._table.setdefault(group, {})
        granted: list[MQ] = []
        for mq in dict.fromkeys(mqs):
            lock = locks.get(mq)
            if lock is None:
                locks[mq] = _Lock(client_id, now)
                _log.info("queue locked", group=group, mq=mq, client_id=client_id)
            elif lock.client_id == client_id:
                lock.last_update = now
            elif lock.expired(now, max_live):
                _log.warning("expired queue lock taken over", group=group, mq=mq, old=lock.client_id, new=client_id)
                lock.client_id, lock.last_update = client_id, now
            else:
                _log.info("queue lock refused", group=group, mq=mq, holder=lock.client_id, client_id=client_id)
                continue
            granted.append(mq)
        return granted

    def unlock_batch(self, group: str, mqs: Iterable[MQ], client_id: str) -> None:
        locks = self._table.get(group)
        if not locks:
            return
        for mq in mqs:
            lock = locks.get(mq)
            if lock is not None and lock.client_id == client_id:
                del locks[mq]
                _log.info("queue unlocked", group=group, mq=mq, client_id=client_id)
        if not locks:
            del self._table[group]

    def locked_by(self, group: str) -> dict[MQ, str]:
        now, max_live = self._clock(), self.max_live_ms / 1000
        return {mq: lk.client_id for mq, lk in self._table.get(group, {}).items() if not lk.expired(now, max_live)}
