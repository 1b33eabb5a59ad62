"""Who becomes master: J 5.5.0's ``DefaultElectPolicy``, pure.

Candidates are tried first among the SyncStateSet, then (only with ``enableElectUncleanMaster=true``) among every
replica of the group. In each pool only live brokers count (the controller's heartbeat table says who is live):

1. the old master, if it is still live and no other broker was designated;
2. a designated broker (mqadmin ``electMaster -b``), if it is live — otherwise nobody;
3. the best by (highest epoch, then highest max offset, then lowest ``electionPriority``) from the heartbeats;
   ties go to the lowest broker id (J's TreeSet keeps an arbitrary one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LiveInfo:
    """What a broker's last heartbeat said about its log (J ``BrokerLiveInfo``)."""

    epoch: int = -1
    max_offset: int = -1
    election_priority: int = 2**31 - 1


Alive = Callable[[str, str, int], bool]  # (clusterName, brokerName, brokerId) -> live?
LiveInfoOf = Callable[[str, str, int], LiveInfo | None]


def _try_elect(
    cluster: str,
    name: str,
    brokers: Iterable[int],
    old_master: int | None,
    prefer: int | None,
    alive: Alive,
    info_of: LiveInfoOf,
) -> int | None:
    live = sorted(b for b in brokers if alive(cluster, name, b))
    if not live:
        return None
    if old_master in live and (prefer is None or prefer == old_master):
        return old_master
    if prefer is not None:
        return prefer if prefer in live else None

    def rank(broker_id: int) -> tuple[int, int, int, int]:
        info = info_of(cluster, name, broker_id) or LiveInfo()
        return (-info.epoch, -info.max_offset, info.election_priority, broker_id)

    return min(live, key=rank)


def elect(
    cluster: str,
    name: str,
    sync_state_set: Iterable[int],
    all_replicas: Iterable[int] | None,
    old_master: int | None,
    prefer: int | None,
    alive: Alive,
    info_of: LiveInfoOf,
) -> int | None:
    """The new master's broker id, or None when no candidate qualifies (``all_replicas`` None = clean only)."""
    chosen = _try_elect(cluster, name, sync_state_set, old_master, prefer, alive, info_of)
    if chosen is None and all_replicas is not None:
        chosen = _try_elect(cluster, name, all_replicas, old_master, prefer, alive, info_of)
    return chosen
