"""The controller's metrics (``metricsExporterType=PROM``, or the name server's endpoint when embedded): read at
scrape time from the state machine, the heartbeat table and the election counts — nothing is recorded per request.

| series                                        | type    | labels                              | J 5.5.0 counterpart  |
|-----------------------------------------------|---------|-------------------------------------|----------------------|
| rocketq_controller_role                       | gauge   | —  (1 leader, 0 follower)           | ``role``             |
| rocketq_controller_election_total             | counter | cluster broker_set election_result  | ``election_total``   |
| rocketq_controller_active_broker_num          | gauge   | cluster broker_set                  | ``active_broker_num``|
| rocketq_controller_master_epoch               | gauge   | cluster broker_set                  | —                    |
| rocketq_controller_sync_state_set_epoch       | gauge   | cluster broker_set                  | —                    |
| rocketq_controller_sync_state_set_size        | gauge   | cluster broker_set                  | —                    |

Constant labels: ``node_type="controller"``, ``node_id=<host:port>`` plus ``metricsLabel``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from controller.service import ControllerService


class ControllerCollector(Collector):
    def __init__(self, service: ControllerService, labels: Callable[[], dict[str, str]]) -> None:
        self._service = service
        self._labels = labels

    def collect(self) -> Iterable[Metric]:
        const = self._labels()
        names, values = list(const), list(const.values())
        s = self._service
        role = GaugeMetricFamily("rocketq_controller_role", "1 when this controller is the leader", labels=names)
        role.add_metric(values, 1 if s.log.is_leader else 0)
        yield role
        elections = CounterMetricFamily(
            "rocketq_controller_election",
            "elections by result",
            labels=[*names, "cluster", "broker_set", "election_result"],
        )
        for (cluster, name, result), count in sorted(s.elections.counts.items()):
            elections.add_metric([*values, cluster, name, result], count)
        yield elections
        group_labels = [*names, "cluster", "broker_set"]
        active = GaugeMetricFamily("rocketq_controller_active_broker_num", "live replicas", labels=group_labels)
        for (cluster, name), n in sorted(s.heartbeats.active_counts().items()):
            active.add_metric([*values, cluster, name], n)
        yield active
        families = {
            "master_epoch": GaugeMetricFamily("rocketq_controller_master_epoch", "MasterEpoch", labels=group_labels),
            "sss_epoch": GaugeMetricFamily(
                "rocketq_controller_sync_state_set_epoch", "SyncStateSet epoch", labels=group_labels
            ),
            "sss_size": GaugeMetricFamily(
                "rocketq_controller_sync_state_set_size", "replicas in the SyncStateSet", labels=group_labels
            ),
        }
        with s.log.lock:
            rows = [
                (info.cluster_name, name, info.master_epoch, info.sync_state_set_epoch, len(info.sync_state_set))
                for name, info in sorted(s.state.sync_states.items())
            ]
        for cluster, name, epoch, sss_epoch, size in rows:
            families["master_epoch"].add_metric([*values, cluster, name], epoch)
            families["sss_epoch"].add_metric([*values, cluster, name], sss_epoch)
            families["sss_size"].add_metric([*values, cluster, name], size)
        yield from families.values()
