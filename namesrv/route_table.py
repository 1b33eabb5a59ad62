"""The name server's routing state: clusters, broker groups, topic queue data and broker liveness. Pure — no IO.

This module owns what J keeps in ``RouteInfoManager`` (4.9.7) and answers every routing question from it:

* ``clusters``: cluster name → broker names.
* ``brokers``: broker name → ``_Broker`` (cluster, name, broker id → address; id 0 is the master).
* ``topics``: topic → broker name → ``QueueData`` (read/write queue counts, perm, topicSysFlag).
* ``live``: broker address → ``_Live`` (last update time, topic-config DataVersion, channel id, HA address).
* ``filter_servers``: broker address → filter server addresses (kept for protocol compatibility).

Besides routes it lists topics: all, by cluster, the "system" ones (cluster and broker names) and, by the
topicSysFlag bits UNIT (0x1) and UNIT_SUB (0x2) of the QueueData, the unit topic lists.

Invariants, kept by every mutation (all run on the event loop, so no locks):

* Every address in ``brokers`` has a ``live`` entry; dropping an address (unregister, expiry, channel close) removes
  it from both, so a route never names a dead broker.
* One address appears under at most one broker id (a slave promoted to master moves from id 1 to id 0).
* When the last address of a broker name goes, its ``_Broker``, its cluster membership (and the cluster, if empty)
  and every topic that only it served go too.
* Only a master (id 0) registration writes topic queue data, and only when its DataVersion changed or it registers
  for the first time (J: ``isBrokerTopicConfigChanged || registerFirst``). Topics a broker stops reporting are kept
  until DELETE_TOPIC_IN_NAMESRV or until the broker name disappears, as in J.

Wire objects (TopicConfig, DataVersion, QueueData, BrokerData, TopicRouteData, ClusterInfo) are
``protocol.bodies``'s; the state kept here is plain dataclasses (``_Broker``, ``_Live``) with one converter each
(``_Broker.snapshot`` → BrokerData, ``_queue_data`` TopicConfig → QueueData).

Time is an injectable millisecond clock (``monotonic_ms`` by default) so expiry is testable with a fake clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from protocol.bodies import BrokerData, ClusterInfo, DataVersion, QueueData, TopicConfig, TopicRouteData
from protocol.rules import PERM_READ, PERM_WRITE

MASTER_ID = 0
TOPIC_FLAG_UNIT = 1  # J TopicSysFlag.FLAG_UNIT
TOPIC_FLAG_UNIT_SUB = 1 << 1  # J TopicSysFlag.FLAG_UNIT_SUB


def monotonic_ms() -> int:
    """The default clock: a monotonic millisecond counter (immune to wall-clock jumps)."""
    return time.monotonic_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class SystemTopics:
    """GET_SYSTEM_TOPIC_LIST_FROM_NS: the topics named after clusters and broker names (every broker creates one
    per name for itself, so they are not user topics) and one broker address to ask for the rest."""

    topics: list[str]
    broker_addr: str | None


@dataclass(frozen=True, slots=True)
class RegisterResult:
    """For a slave: its master's address and HA address (None for masters or while no master is live)."""

    master_addr: str | None = None
    ha_server_addr: str | None = None
    topics_updated: bool = False
    first_registration: bool = False


def _queue_data(broker_name: str, tc: TopicConfig) -> QueueData:
    """The one converter from a registered topic config to the queue data a route carries."""
    return QueueData(
        broker_name=broker_name,
        read_queue_nums=tc.read_queue_nums,
        write_queue_nums=tc.write_queue_nums,
        perm=tc.perm,
        topic_sys_flag=tc.topic_sys_flag,
    )


@dataclass(slots=True)
class _Broker:
    cluster: str
    name: str
    addrs: dict[int, str] = field(default_factory=dict)

    def snapshot(self) -> BrokerData:
        """The one converter to the wire model: ``broker_addrs`` is a fresh dict ordered by broker id."""
        return BrokerData(cluster=self.cluster, broker_name=self.name, broker_addrs=dict(sorted(self.addrs.items())))


@dataclass(slots=True)
class _Live:
    last_update: int
    data_version: DataVersion | None
    channel_id: int | None
    ha_server_addr: str


class RouteTable:
    def __init__(self, clock: Callable[[], int] = monotonic_ms) -> None:
        self._clock = clock
        self._clusters: dict[str, set[str]] = {}
        self._brokers: dict[str, _Broker] = {}
        self._topics: dict[str, dict[str, QueueData]] = {}
        self._live: dict[str, _Live] = {}
        self._filter_servers: dict[str, list[str]] = {}

    def now(self) -> int:
        return self._clock()

    # -- registration ----------------------------------------------------------------------------------------

    def register(
        self,
        cluster: str,
        addr: str,
        name: str,
        broker_id: int,
        ha_server_addr: str,
        data_version: DataVersion | None,
        topic_configs: Mapping[str, TopicConfig] | None,
        filter_servers: list[str] | None = None,
        channel_id: int | None = None,
    ) -> RegisterResult:
        """Record a REGISTER_BROKER. ``data_version=None`` means "unknown", which always counts as changed."""
        self._clusters.setdefault(cluster, set()).add(name)
        broker = self._brokers.get(name)
        first = broker is None
        if broker is None:
            broker = self._brokers[name] = _Broker(cluster, name)
        for other_id in [i for i, a in broker.addrs.items() if a == addr and i != broker_id]:
            del broker.addrs[other_id]  # same address, new role (slave promoted to master or the reverse)
        old_addr = broker.addrs.get(broker_id)
        broker.addrs[broker_id] = addr
        if old_addr is not None and old_addr != addr and not self._addr_in_use(old_addr):
            self._drop_live(old_addr)  # the id moved to a new address; the old one serves nothing any more
        first = first or old_addr is None

        updated = False
        if broker_id == MASTER_ID and topic_configs is not None and (first or self.is_changed(addr, data_version)):
            for tc in topic_configs.values():
                self._topics.setdefault(tc.topic_name, {})[name] = _queue_data(name, tc)
            updated = True

        self._live[addr] = _Live(self._clock(), data_version, channel_id, ha_server_addr)
        if filter_servers is not None:
            if filter_servers:
                self._filter_servers[addr] = list(filter_servers)
            else:
                self._filter_servers.pop(addr, None)

        master_addr = ha_addr = None
        if broker_id != MASTER_ID:
            master = broker.addrs.get(MASTER_ID)
            live = self._live.get(master) if master is not None else None
            if master is not None and live is not None:
                master_addr, ha_addr = master, live.ha_server_addr
        return RegisterResult(master_addr, ha_addr, updated, first)

    def unregister(self, cluster: str, addr: str, name: str, broker_id: int) -> bool:
        """UNREGISTER_BROKER. The id is released only if it still maps to ``addr`` (a stale unregister is harmless)."""
        del cluster  # the broker's own record says which cluster it is in
        found = self._live.pop(addr, None) is not None
        self._filter_servers.pop(addr, None)
        broker = self._brokers.get(name)
        if broker is not None and broker.addrs.get(broker_id) == addr:
            del broker.addrs[broker_id]
            found = True
            if not broker.addrs:
                self._drop_broker_name(name)
        return found

    def touch(self, addr: str) -> bool:
        """Refresh a live broker's last-update time (QUERY_DATA_VERSION with an unchanged version)."""
        live = self._live.get(addr)
        if live is None:
            return False
        live.last_update = self._clock()
        return True

    def data_version(self, addr: str) -> DataVersion | None:
        live = self._live.get(addr)
        return live.data_version if live is not None else None

    def is_changed(self, addr: str, data_version: DataVersion | None) -> bool:
        prev = self.data_version(addr)
        return prev is None or data_version is None or prev != data_version

    # -- liveness --------------------------------------------------------------------------------------------

    def expire(self, now: int, timeout: int) -> list[str]:
        """Drop every broker whose last update is more than ``timeout`` ms before ``now``; return their addresses."""
        dead = [addr for addr, live in self._live.items() if live.last_update + timeout < now]
        for addr in dead:
            self._drop_addr(addr)
        return dead

    def remove_by_channel(self, channel_id: int) -> list[str]:
        """The connection ``channel_id`` closed: drop every broker that registered over it."""
        gone = [addr for addr, live in self._live.items() if live.channel_id == channel_id]
        for addr in gone:
            self._drop_addr(addr)
        return gone

    def channel_ids(self) -> dict[str, int]:
        return {addr: live.channel_id for addr, live in self._live.items() if live.channel_id is not None}

    def has_channel(self, channel_id: int) -> bool:
        return any(live.channel_id == channel_id for live in self._live.values())

    def live_addrs(self) -> list[str]:
        return sorted(self._live)

    # -- queries ---------------------------------------------------------------------------------------------

    def route(self, topic: str) -> TopicRouteData | None:
        """The route of ``topic`` (without ``orderTopicConf``: that comes from the KV config, not routing), or None
        when no live broker group serves it."""
        queues = self._topics.get(topic)
        if not queues:
            return None
        broker_datas = [self._brokers[n].snapshot() for n in sorted(queues) if n in self._brokers]
        if not broker_datas:
            return None
        filters: dict[str, list[str]] = {}
        for bd in broker_datas:
            for addr in bd.broker_addrs.values():
                if addr in self._filter_servers:
                    filters[addr] = list(self._filter_servers[addr])
        return TopicRouteData(
            queue_datas=[queues[n] for n in sorted(queues)], broker_datas=broker_datas, filter_server_table=filters
        )

    def cluster_info(self) -> ClusterInfo:
        return ClusterInfo(
            broker_addr_table={name: self._brokers[name].snapshot() for name in sorted(self._brokers)},
            cluster_addr_table={cluster: sorted(names) for cluster, names in sorted(self._clusters.items())},
        )

    def all_topics(self) -> list[str]:
        return sorted(self._topics)

    def topics_by_cluster(self, cluster: str) -> list[str]:
        names = self._clusters.get(cluster, set())
        return sorted(t for t, queues in self._topics.items() if names.intersection(queues))

    def system_topics(self) -> SystemTopics:
        """J ``getSystemTopicList``: every cluster name and broker name, and the address of the first broker group
        (by name) at its lowest id, i.e. its master when the master is registered."""
        topics = set(self._clusters)
        for names in self._clusters.values():
            topics |= names
        addr = None
        for name in sorted(self._brokers):
            addrs = self._brokers[name].addrs
            if addrs:
                addr = addrs[min(addrs)]
                break
        return SystemTopics(sorted(topics), addr)

    def unit_topics(self) -> list[str]:
        """J ``getUnitTopics``: topics with the UNIT flag."""
        return self._topics_by_flag(lambda flag: bool(flag & TOPIC_FLAG_UNIT))

    def unit_sub_topics(self) -> list[str]:
        """J ``getHasUnitSubTopicList``: topics with the UNIT_SUB flag."""
        return self._topics_by_flag(lambda flag: bool(flag & TOPIC_FLAG_UNIT_SUB))

    def unit_sub_non_unit_topics(self) -> list[str]:
        """J ``getHasUnitSubUnUnitTopicList``: topics with UNIT_SUB but not UNIT."""
        return self._topics_by_flag(lambda flag: flag & (TOPIC_FLAG_UNIT | TOPIC_FLAG_UNIT_SUB) == TOPIC_FLAG_UNIT_SUB)

    def _topics_by_flag(self, pick: Callable[[int], bool]) -> list[str]:
        """Topics whose topicSysFlag satisfies ``pick``. Like J, one QueueData decides per topic; J takes whichever
        its HashMap yields first, we take the first broker name's so the answer is stable."""
        return sorted(t for t, queues in self._topics.items() if queues and pick(queues[min(queues)].topic_sys_flag))

    # -- admin -----------------------------------------------------------------------------------------------

    def delete_topic(self, topic: str, cluster: str | None = None) -> bool:
        """Forget ``topic`` everywhere, or only on the broker groups of ``cluster``."""
        if cluster is None:
            return self._topics.pop(topic, None) is not None
        queues = self._topics.get(topic)
        if queues is None:
            return False
        removed = False
        for name in self._clusters.get(cluster, set()):
            removed = queues.pop(name, None) is not None or removed
        if not queues:
            del self._topics[topic]
        return removed

    def wipe_write_perm(self, broker_name: str) -> int:
        """Clear the WRITE bit of every topic on ``broker_name`` (drain before maintenance); returns the count."""
        return self._set_perm(broker_name, lambda perm: perm & ~PERM_WRITE)

    def add_write_perm(self, broker_name: str) -> int:
        """Restore READ|WRITE on every topic of ``broker_name`` (J sets exactly 6); returns the count."""
        return self._set_perm(broker_name, lambda _perm: PERM_READ | PERM_WRITE)

    def _set_perm(self, broker_name: str, change: Callable[[int], int]) -> int:
        count = 0
        for queues in self._topics.values():
            qd = queues.get(broker_name)
            if qd is not None:
                queues[broker_name] = qd.model_copy(update={"perm": change(qd.perm)})
                count += 1
        return count

    # -- removal helpers -------------------------------------------------------------------------------------

    def _addr_in_use(self, addr: str) -> bool:
        return any(addr in broker.addrs.values() for broker in self._brokers.values())

    def _drop_live(self, addr: str) -> None:
        self._live.pop(addr, None)
        self._filter_servers.pop(addr, None)

    def _drop_addr(self, addr: str) -> None:
        self._drop_live(addr)
        for broker in list(self._brokers.values()):
            ids = [i for i, a in broker.addrs.items() if a == addr]
            for i in ids:
                del broker.addrs[i]
            if ids and not broker.addrs:
                self._drop_broker_name(broker.name)

    def _drop_broker_name(self, name: str) -> None:
        self._brokers.pop(name, None)
        for cluster in [c for c, names in self._clusters.items() if name in names]:
            names = self._clusters[cluster]
            names.discard(name)
            if not names:
                del self._clusters[cluster]
        for topic in list(self._topics):
            queues = self._topics[topic]
            queues.pop(name, None)
            if not queues:
                del self._topics[topic]
