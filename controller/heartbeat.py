"""Which brokers are live, as this controller hears them: J 5.5.0's ``DefaultBrokerHeartbeatManager``. Pure state
plus a clock; the scan task lives in ``controller.service``.

Every controller keeps its own table (brokers send BROKER_HEARTBEAT to every controller they can reach), so a newly
elected controller leader already knows who is live. A broker is live while ``now <= last heartbeat + its timeout``
(the broker's ``controllerHeartBeatTimeoutMills``, default 10 s; J ``DEFAULT_BROKER_CHANNEL_EXPIRED_TIME``). A
heartbeat's epoch / max offset replace the recorded ones only when newer (higher epoch, or same epoch and a higher
offset), as J does; they rank the candidates of an election (``controller.elect``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from controller.elect import LiveInfo

DEFAULT_BROKER_CHANNEL_EXPIRED_TIME = 10_000  # ms; J BrokerHeartbeatManager
_INT_MAX = 2**31 - 1

BrokerKey = tuple[str, str, int]  # (clusterName, brokerName, brokerId)


@dataclass(slots=True)
class BrokerLive:
    broker_addr: str
    last_update_ms: int
    timeout_ms: int
    channel: object | None
    epoch: int = -1
    max_offset: int = -1
    confirm_offset: int = -1
    election_priority: int = _INT_MAX


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """One BROKER_HEARTBEAT, with J's defaults for the nullable fields already filled in."""

    cluster_name: str
    broker_name: str
    broker_addr: str
    broker_id: int
    timeout_ms: int = DEFAULT_BROKER_CHANNEL_EXPIRED_TIME
    epoch: int = -1
    max_offset: int = -1
    confirm_offset: int = -1
    election_priority: int = _INT_MAX


class HeartbeatTable:
    def __init__(self, clock_ms: Callable[[], int]) -> None:
        self._clock = clock_ms
        self._live: dict[BrokerKey, BrokerLive] = {}

    def on_heartbeat(self, hb: Heartbeat, channel: object | None) -> bool:
        """Record a heartbeat; True when the broker was not in the table."""
        key = (hb.cluster_name, hb.broker_name, hb.broker_id)
        now = self._clock()
        prev = self._live.get(key)
        if prev is None:
            self._live[key] = BrokerLive(
                hb.broker_addr,
                now,
                hb.timeout_ms,
                channel,
                hb.epoch,
                hb.max_offset,
                hb.confirm_offset,
                hb.election_priority,
            )
            return True
        prev.last_update_ms = now
        prev.timeout_ms = hb.timeout_ms
        prev.election_priority = hb.election_priority
        prev.channel = channel
        prev.broker_addr = hb.broker_addr
        if hb.epoch > prev.epoch or (hb.epoch == prev.epoch and hb.max_offset > prev.max_offset):
            prev.epoch, prev.max_offset, prev.confirm_offset = hb.epoch, hb.max_offset, hb.confirm_offset
        return False

    def is_alive(self, cluster: str, name: str, broker_id: int) -> bool:
        info = self._live.get((cluster, name, broker_id))
        return info is not None and info.last_update_ms + info.timeout_ms >= self._clock()

    def live_info(self, cluster: str, name: str, broker_id: int) -> LiveInfo | None:
        info = self._live.get((cluster, name, broker_id))
        if info is None:
            return None
        return LiveInfo(info.epoch, info.max_offset, info.election_priority)

    def now_ms(self) -> int:
        return self._clock()

    def next_expiry_ms(self) -> int | None:
        """When the first live broker's heartbeat runs out (its last heartbeat + its timeout), None when none."""
        return min((v.last_update_ms + v.timeout_ms for v in self._live.values()), default=None)

    def expire(self) -> list[tuple[BrokerKey, object | None]]:
        """Drop the brokers whose heartbeats stopped; returns them with their channels (to close)."""
        now = self._clock()
        gone = [(k, v.channel) for k, v in self._live.items() if now - v.last_update_ms > v.timeout_ms]
        for key, _channel in gone:
            del self._live[key]
        return gone

    def on_channel_closed(self, channel: object) -> BrokerKey | None:
        """A broker's connection closed: it is no longer live (J ``onBrokerChannelClose``)."""
        for key, info in self._live.items():
            if info.channel is channel:
                del self._live[key]
                return key
        return None

    def active_counts(self) -> dict[tuple[str, str], int]:
        """(cluster, brokerName) → live replicas (J ``getActiveBrokersNum``, the metrics' gauge)."""
        out: dict[tuple[str, str], int] = {}
        for cluster, name, broker_id in list(self._live):
            if self.is_alive(cluster, name, broker_id):
                out[(cluster, name)] = out.get((cluster, name), 0) + 1
        return out
