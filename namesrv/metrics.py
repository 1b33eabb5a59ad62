"""The name server's metrics (``metricsExporterType=PROM``): the remoting ``rocketmq_rpc_latency`` histogram that J
5.x records in every remoting server, plus what the route table knows, as our own ``rocketq_namesrv_*`` gauges
(J's name server exports none): live brokers, clusters, topics. Constant labels ``node_type="namesrv"`` and
``node_id=<host:port>`` (+ ``metricsLabel``). Served with ``/healthz`` and ``/readyz`` (ready once listening).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from namesrv.config import NamesrvConfig
from namesrv.route_table import RouteTable
from runtime.exporter import DaemonMetrics, Readiness


class NamesrvCollector(Collector):
    def __init__(self, labels: Callable[[], dict[str, str]], routes: RouteTable) -> None:
        self._labels = labels
        self._routes = routes

    def collect(self) -> Iterable[Metric]:
        const = self._labels()
        info = self._routes.cluster_info()
        for name, doc, value in (
            ("rocketq_namesrv_live_brokers", "brokers with a live registration", len(self._routes.live_addrs())),
            ("rocketq_namesrv_clusters", "clusters known to the route table", len(info.cluster_addr_table)),
            ("rocketq_namesrv_topics", "topics known to the route table", len(self._routes.all_topics())),
        ):
            g = GaugeMetricFamily(name, doc, labels=list(const))
            g.add_metric(list(const.values()), value)
            yield g


class NamesrvMetrics(DaemonMetrics):
    def __init__(self, cfg: NamesrvConfig, routes: RouteTable, node_id: Callable[[], str], ready: Readiness) -> None:
        self._node_id = node_id
        self._extra = cfg.labels
        host = cfg.metrics_prom_exporter_host or cfg.listen_address
        super().__init__(self.labels, host, cfg.metrics_prom_exporter_port, ready, name="namesrv")
        self.register(NamesrvCollector(self.labels, routes))

    def labels(self) -> dict[str, str]:
        return {"node_type": "namesrv", "node_id": self._node_id(), **self._extra}
