"""ReplicationCollector: the HA series, read at scrape time from the HA service's plain state objects
(``broker.ha.state``); nothing is counted on the replication path for them.

J 5.x has no replication metrics under the ``rocketmq_`` prefix, so these are ours:

============================================ ===== =========== ==========================================================
name                                         type  labels      value
============================================ ===== =========== ==========================================================
rocketq_ha_slave_lag_bytes                   gauge slave       master: commit-log end minus the slave's acked offset
rocketq_ha_slave_ack_offset_bytes            gauge slave       master: the slave's last acked commit-log offset
rocketq_ha_connected_slaves                  gauge             master: slave connections (acked or not yet)
rocketq_ha_writes_fenced                     gauge             master: 1 while it takes no writes (a slave may be
                                                               ahead; controller mode: no lease or too few in sync)
rocketq_ha_replica_behind_bytes              gauge             slave: the master's end (last transfer header) minus ours
rocketq_ha_replica_ahead_bytes               gauge             slave: bytes held beyond a master that refused them
rocketq_ha_controller_role                   gauge role        controller mode: 1 for the role the controller gave
                                                               (MASTER, SLAVE, NONE)
rocketq_ha_master_epoch                      gauge             controller mode: the master epoch this broker follows
rocketq_ha_sync_state_set_size               gauge             controller mode, master: replicas in the SyncStateSet
rocketq_ha_elections_seen                    gauge             controller mode: master epochs adopted since start
============================================ ===== =========== ==========================================================

Every series also carries the broker's constant labels (``cluster``, ``node_type``, ``node_id``, …).
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from broker.ha.service import HAService


class ReplicationCollector(Collector):
    """Replication lag per slave (on a master) or behind its master (on a slave)."""

    def __init__(self, const_labels: dict[str, str], ha: HAService) -> None:
        self._const = const_labels
        self._ha = ha

    def _gauge(self, name: str, doc: str, labels: Iterable[str] = ()) -> GaugeMetricFamily:
        return GaugeMetricFamily(name, doc, labels=[*self._const, *labels])

    def collect(self) -> Iterable[Metric]:
        c = list(self._const.values())
        end = self._ha.store.commitlog.max_offset
        master = self._ha.master
        if master is not None:
            st = master.state
            lag = self._gauge("rocketq_ha_slave_lag_bytes", "Bytes a slave is behind this master", ["slave"])
            ack = self._gauge("rocketq_ha_slave_ack_offset_bytes", "A slave's last acked commit-log offset", ["slave"])
            for link in st.links.values():
                if link.ack_offset >= 0:
                    lag.add_metric([*c, link.peer], max(0, end - link.ack_offset))
                    ack.add_metric([*c, link.peer], link.ack_offset)
            yield lag
            yield ack
            n = self._gauge("rocketq_ha_connected_slaves", "Slave connections of this master")
            n.add_metric(c, len(st.links))
            yield n
            fenced = self._gauge(
                "rocketq_ha_writes_fenced", "1 while the master takes no writes (a slave may be ahead)"
            )
            rep = self._ha.replicas
            fenced.add_metric(c, 1 if st.fenced is not None or (rep is not None and not rep.writable) else 0)
            yield fenced
        slave = self._ha.slave
        if slave is not None:
            behind = self._gauge("rocketq_ha_replica_behind_bytes", "Bytes this slave is behind its master")
            behind.add_metric(c, max(0, slave.state.master_offset - end))
            yield behind
            ahead = self._gauge("rocketq_ha_replica_ahead_bytes", "Bytes this slave holds beyond its master")
            ahead.add_metric(c, slave.state.ahead_by)
            yield ahead
        rep = self._ha.replicas
        if rep is not None:
            role = self._gauge("rocketq_ha_controller_role", "1 for the role the controller gave this broker", ["role"])
            for name in ("MASTER", "SLAVE", "NONE"):
                role.add_metric([*c, name], 1 if rep.role == name else 0)
            yield role
            epoch = self._gauge("rocketq_ha_master_epoch", "The master epoch this broker follows")
            epoch.add_metric(c, rep.master_epoch)
            yield epoch
            sss = self._gauge("rocketq_ha_sync_state_set_size", "Replicas in the SyncStateSet (on its master)")
            sss.add_metric(c, len(rep.tracker.members) if rep.role == "MASTER" else 0)
            yield sss
            seen = self._gauge("rocketq_ha_elections_seen", "Master epochs this broker adopted since it started")
            seen.add_metric(c, rep.elections_seen)
            yield seen
