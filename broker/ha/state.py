"""The plain state objects of replication, read by ``mqadmin`` (brokerStatus, clusterList, haStatus) and, later,
by metrics. The HA service updates them; nothing else writes them.

* ``MasterHAState``: per connected slave, its address and last acked offset (RocketMQ's ``slaveAckOffset``), and
  ``push2slave_max`` — the largest ack over all slaves, which SYNC_MASTER waits on. ``fenced`` is the reason the
  master takes no writes (a slave's log may be ahead of it), None when it does.
* ``SlaveHAState``: the master this slave follows, how far it has copied, and its state (``SlaveRole``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class SlaveLink:
    """The master's view of one slave connection."""

    peer: str
    connected_at: float = field(default_factory=time.time)
    ack_offset: int = -1  # the slave's last reported commit-log end (-1: no report yet)
    last_report_at: float = 0.0
    transferred: int = 0  # bytes sent to it on this connection
    # controller mode: the replica's broker id (from its epoch handshake), and when it last caught up — its ack
    # reached the master's end as of ``mark_at`` (J's lastCaughtUpTime), which the SyncStateSet shrink reads
    broker_id: int = -1
    mark_offset: int = 2**63 - 1
    mark_at: float = 0.0
    caught_up_at: float = 0.0


@dataclass(slots=True)
class MasterHAState:
    links: dict[int, SlaveLink] = field(default_factory=dict)
    push2slave_max: int = 0
    fenced: str | None = None
    caught_up_from_slave: int = 0  # bytes this master copied back from a slave that was ahead of it
    diverged_slaves: dict[str, int] = field(default_factory=dict)  # slave peer → its offset, ahead of ours
    auth_refused: int = 0  # HA connections closed because they did not authenticate (broker.ha.auth)

    def lag(self, master_offset: int) -> dict[str, int]:
        """Bytes each connected slave is behind ``master_offset`` (its acked end)."""
        return {
            link.peer: max(0, master_offset - link.ack_offset) for link in self.links.values() if link.ack_offset >= 0
        }

    def as_dict(self, master_offset: int) -> dict[str, Any]:
        return {
            "role": "MASTER",
            "masterOffset": master_offset,
            "push2SlaveMaxOffset": self.push2slave_max,
            "slaveCount": len(self.links),
            "fenced": self.fenced or "",
            "caughtUpFromSlave": self.caught_up_from_slave,
            "divergedSlaves": dict(self.diverged_slaves),
            "haAuthRefused": self.auth_refused,
            "slaves": [
                {
                    "addr": link.peer,
                    "ackOffset": link.ack_offset,
                    "behindBytes": max(0, master_offset - link.ack_offset) if link.ack_offset >= 0 else -1,
                    "connectedSince": int(link.connected_at * 1000),
                    "transferredBytes": link.transferred,
                }
                for link in self.links.values()
            ],
        }


@dataclass(slots=True)
class SlaveHAState:
    master_ha_addr: str | None = None
    master_addr: str | None = None
    state: str = "DISCONNECTED"  # DISCONNECTED, CONNECTED, REPLICATING, AHEAD_OF_MASTER, SERVING_MASTER
    master_offset: int = 0  # the master's end as last seen in a transfer header
    connects: int = 0
    ahead_by: int = 0  # bytes this slave holds beyond a master that refused to take them back
    last_transfer_at: float = 0.0

    def as_dict(self, slave_offset: int) -> dict[str, Any]:
        return {
            "role": "SLAVE",
            "state": self.state,
            "masterHaAddr": self.master_ha_addr or "",
            "masterAddr": self.master_addr or "",
            "slaveOffset": slave_offset,
            "masterOffset": self.master_offset,
            "behindBytes": max(0, self.master_offset - slave_offset),
            "aheadOfMasterBytes": self.ahead_by,
            "connects": self.connects,
        }
