"""The Grafana dashboard in conf/grafana loads (a schema check of what Grafana needs: panels, grid, targets,
template variables) and every query in it names a metric a real broker or name server exports, with labels that
metric carries; the docker-compose "monitoring" profile wires Prometheus and Grafana to it (checked without Docker).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families

from client import LocalTransactionState, Message, Producer
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import CreateTopicRequestHeader
from protocol.remoting import RemotingClient
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import heartbeat_cmd, pull, send, simple_cmd
from tests.integration.test_metrics import METRICS, http_get

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "conf" / "grafana" / "dashboards" / "rocketq.json"
PANEL_TYPES = {"timeseries", "stat", "gauge", "table", "bargauge", "row"}
METRIC = re.compile(r"\b(rocket(?:mq|q)_[a-z0-9_]+)")
BY = re.compile(r"\bby \(([^)]*)\)")
MATCHER = re.compile(r"([a-z_]+)\s*(?:=~|!~|!=|=)\s*\"")


def load_dashboard() -> dict[str, Any]:
    doc = json.loads(DASHBOARD.read_text())
    assert isinstance(doc, dict)
    return doc


def all_queries(doc: dict[str, Any]) -> list[str]:
    out = [t["expr"] for p in doc["panels"] for t in p.get("targets", [])]
    out += [v["query"]["query"] for v in doc["templating"]["list"] if v["type"] == "query"]
    return out


def test_dashboard_schema() -> None:
    doc = load_dashboard()
    assert isinstance(doc["schemaVersion"], int) and doc["schemaVersion"] >= 36
    assert doc["uid"] and doc["title"]
    variables = {v["name"]: v for v in doc["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    ids = [p["id"] for p in doc["panels"]]
    assert len(ids) == len(set(ids))
    titles = {p["title"] for p in doc["panels"] if p["type"] == "row"}
    assert {
        "Cluster overview",
        "Topics",
        "Consumer groups",
        "Latency",
        "Store",
        "Transactions and administration",
    } <= titles
    for p in doc["panels"]:
        assert p["type"] in PANEL_TYPES, p["type"]
        g = p["gridPos"]
        assert all(isinstance(g[k], int) for k in "hwxy") and g["x"] + g["w"] <= 24
        if p["type"] == "row":
            continue
        assert p["datasource"]["uid"] == "${datasource}"
        assert p["targets"], p["title"]
        refs = [t["refId"] for t in p["targets"]]
        assert len(refs) == len(set(refs))
    for q in all_queries(doc):
        assert q.count("(") == q.count(")") and q.count("{") == q.count("}"), q
        for var in re.findall(r"\$(\w+)", q):
            assert var in variables or var.startswith("__"), f"{q} uses undefined ${var}"


async def exported(tmp_path: Path) -> tuple[set[str], dict[str, set[str]]]:
    """Sample names and label names a broker and a name server export after a workload touching every family."""
    names: set[str] = set()
    labels: dict[str, set[str]] = {}
    client = RemotingClient()
    try:
        async with run_namesrv(tmp_path, **METRICS) as ns, run_broker(ns, tmp_path, **METRICS) as broker:
            assert broker.metrics is not None and ns.metrics is not None
            r = await send(client, broker.addr, "DashT", b"x", queue_id=0)
            phys = int(r.ext_fields["msgId"][16:], 16)
            await client.invoke(broker.addr, heartbeat_cmd("cid", "DashG", "DashT"), 5.0)
            producer = {"clientID": "pid", "producerDataSet": [{"groupName": "DashPG"}], "consumerDataSet": []}
            hb = RemotingCommand.request(RequestCode.HEART_BEAT, {}, json.dumps(producer).encode())
            assert (await client.invoke(broker.addr, hb, 5.0)).code == ResponseCode.SUCCESS
            await pull(client, broker.addr, "DashG", "DashT", 0, 0)
            await client.invoke(
                broker.addr,
                simple_cmd(
                    RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup="DashG", topic="DashT", queueId=0, commitOffset=1
                ),
                5.0,
            )
            back = simple_cmd(RequestCode.CONSUMER_SEND_MSG_BACK, offset=phys, group="DashG", delayLevel=-1)
            assert (await client.invoke(broker.addr, back, 5.0)).code == ResponseCode.SUCCESS
            async with Producer("DashTxPG", namesrv_addr=ns.addr) as p:
                for state in (LocalTransactionState.COMMIT_MESSAGE, LocalTransactionState.ROLLBACK_MESSAGE):
                    await p.send_message_in_transaction(Message("DashTxT", b"t"), lambda m, a, s=state: s)
            topic = CreateTopicRequestHeader("DashNewT", "TBW102", 1, 1, 6).to_ext_fields()
            r = await client.invoke(
                broker.addr, RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, topic), 5.0
            )
            assert r.code == ResponseCode.SUCCESS
            group = {"groupName": "DashNewG", "consumeEnable": True, "retryQueueNums": 1, "retryMaxTimes": 16}
            r = await client.invoke(
                broker.addr,
                RemotingCommand.request(
                    RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, json.dumps(group).encode()
                ),
                5.0,
            )
            assert r.code == ResponseCode.SUCCESS, r.remark
            for port in (broker.metrics.port, ns.metrics.port):
                status, text = await http_get(port, "/metrics")
                assert status == 200
                for fam in text_string_to_metric_families(text):
                    for s in fam.samples:
                        names.add(s.name)
                        labels.setdefault(s.name, set()).update(s.labels)
    finally:
        await client.close()
    return names, labels


async def test_every_query_names_an_exported_metric(tmp_path: Path) -> None:
    names, labels = await exported(tmp_path)
    for q in all_queries(load_dashboard()):
        used = METRIC.findall(q)
        assert used, f"query names no metric: {q}"
        for metric in used:
            assert metric in names, f"{metric} (in {q}) is not exported"
        have = set().union(*(labels[m] for m in used))
        wanted = {x.strip() for grp in BY.findall(q) for x in grp.split(",") if x.strip()} | set(MATCHER.findall(q))
        wanted -= {"le"} if any(m.endswith("_bucket") for m in used) else set()
        assert wanted <= have | {"le"}, f"{q}: labels {wanted - have} are not on {used}"


def test_compose_monitoring_profile() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    services = compose["services"]
    for name in ("prometheus", "grafana"):
        assert services[name]["profiles"] == ["monitoring"]
        for volume in services[name]["volumes"]:
            source = volume.split(":")[0]
            assert (REPO / source).exists(), source
    prom = yaml.safe_load((REPO / "conf" / "prometheus.yml").read_text())
    targets = {t for job in prom["scrape_configs"] for sc in job["static_configs"] for t in sc["targets"]}

    def props(name: str) -> dict[str, str]:
        lines = (REPO / "conf" / name).read_text().splitlines()
        return dict(ln.split("=", 1) for ln in lines if ln and not ln.startswith("#"))

    broker, namesrv = props("broker.conf"), props("namesrv.conf")
    assert broker["metricsExporterType"] == namesrv["metricsExporterType"] == "PROM"
    assert targets == {f"broker:{broker['metricsPromExporterPort']}", f"namesrv:{namesrv['metricsPromExporterPort']}"}
    assert "/etc/prometheus/prometheus.yml" in " ".join(services["prometheus"]["command"])
    mounts = dict(v.split(":")[1::-1] for v in services["grafana"]["volumes"])
    provider = yaml.safe_load((REPO / "conf/grafana/provisioning/dashboards/rocketq.yml").read_text())
    path = provider["providers"][0]["options"]["path"]
    assert (REPO / mounts[path] / "rocketq.json").resolve() == DASHBOARD
    ds = yaml.safe_load((REPO / "conf/grafana/provisioning/datasources/prometheus.yml").read_text())
    assert ds["datasources"][0]["url"] == "http://prometheus:9090"
    assert services["namesrv"]["command"][-1] in {v.split(":")[1] for v in services["namesrv"]["volumes"]}
