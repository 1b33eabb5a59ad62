"""BrokerMetrics: the broker's metrics registry, its RPC latency counts and the ``/metrics`` ``/healthz``
``/readyz`` endpoint on ``metricsPromExporterHost:metricsPromExporterPort`` (J 5.x keys; host "" → brokerIP1).

Built by ``BrokerApp`` only when ``metricsExporterType=PROM``. ``observe`` is the RemotingServer's request
observer; ``collector.extra`` takes more collectors (HA replication lag). Readiness is decided by the callable the
app passes (store open and registered with at least one name server).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.registry import Collector

from broker.metrics.collector import BrokerCollector, BrokerSources
from runtime.exporter import DaemonMetrics, Readiness

if TYPE_CHECKING:
    from broker.config import BrokerConfig


def const_labels(cfg: BrokerConfig) -> dict[str, str]:
    """J's constant labels: cluster, node_type, node_id, then the ``metricsLabel`` pairs."""
    return {
        "cluster": cfg.identity.broker_cluster_name,
        "node_type": "broker",
        "node_id": cfg.identity.broker_name,
        **cfg.observability.labels,
    }


class BrokerMetrics(DaemonMetrics):
    def __init__(
        self,
        cfg: BrokerConfig,
        sources: BrokerSources,
        ready: Readiness,
    ) -> None:
        labels = const_labels(cfg)
        obs = cfg.observability
        host = obs.metrics_prom_exporter_host or cfg.identity.broker_ip1
        super().__init__(lambda: labels, host, obs.metrics_prom_exporter_port, ready, name="broker")
        self.collector = BrokerCollector(labels, sources, lambda: cfg.identity.broker_permission)
        self.register(self.collector)

    def add_collector(self, collector: Collector) -> None:
        """More broker series on the same endpoint and constant labels (the hook HA uses for replication lag per
        slave: a collector reading the HA service's offsets at scrape time)."""
        self.collector.extra.append(collector)
