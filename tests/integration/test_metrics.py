"""The broker's /metrics after a known workload, scraped over HTTP from a real broker and parsed with
prometheus_client's own parser: exact counters and label sets, lag equal to the broker's own offsets diff, RPC
latency counts per request code; /healthz, /readyz (503 until a name server took the registration, then 200); a
deleted topic leaving the metrics.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from protocol.codes import RequestCode, ResponseCode
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import heartbeat_cmd, pull, send, simple_cmd

METRICS = {"metricsExporterType": "PROM", "metricsPromExporterHost": "127.0.0.1", "metricsPromExporterPort": 0}
N, M, K = 7, 4, 2
TOPIC, GROUP = "MetricsT", "MetricsG"


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


async def http_get(port: int, path: str) -> tuple[int, str]:
    return await asyncio.to_thread(_get, f"http://127.0.0.1:{port}{path}")


Samples = dict[str, list[tuple[dict[str, str], float]]]


async def scrape(port: int) -> Samples:
    status, text = await http_get(port, "/metrics")
    assert status == 200
    out: Samples = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, []).append((dict(s.labels), s.value))
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    hits = [v for lab, v in samples.get(name, []) if all(lab.get(k) == want for k, want in labels.items())]
    assert len(hits) == 1, f"{name} {labels}: {hits} in {samples.get(name)}"
    return hits[0]


def value_or_0(samples: Samples, name: str, **labels: str) -> float:
    """Like ``value``, but 0 when the series does not exist yet (a counter before its first increment)."""
    hits = [v for lab, v in samples.get(name, []) if all(lab.get(k) == want for k, want in labels.items())]
    assert len(hits) <= 1, f"{name} {labels}: {hits}"
    return hits[0] if hits else 0.0


async def test_metrics_after_known_workload(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, **METRICS) as broker:
        assert broker.metrics is not None
        port = broker.metrics.port
        phys = []
        for i in range(N):
            r = await send(client, broker.addr, TOPIC, b"m%02d" % i, queue_id=0, v2=True)
            assert r.code == ResponseCode.SUCCESS, r.remark
            phys.append(int(r.ext_fields["msgId"][16:], 16))
        assert broker.store is not None
        stored_bytes = broker.store.put_bytes  # the store's own count of bytes written by these N puts
        r = await client.invoke(broker.addr, heartbeat_cmd("cid-1", GROUP, TOPIC), 5.0)
        assert r.code == ResponseCode.SUCCESS
        got = await pull(client, broker.addr, GROUP, TOPIC, 0, 0, max_msgs=M)
        assert got.code == ResponseCode.SUCCESS and int(got.ext_fields["nextBeginOffset"]) == M
        r = await client.invoke(
            broker.addr,
            simple_cmd(RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup=GROUP, topic=TOPIC, queueId=0, commitOffset=M),
            5.0,
        )
        assert r.code == ResponseCode.SUCCESS
        for off in phys[:K]:
            r = await client.invoke(
                broker.addr, simple_cmd(RequestCode.CONSUMER_SEND_MSG_BACK, offset=off, group=GROUP, delayLevel=-1), 5.0
            )
            assert r.code == ResponseCode.SUCCESS, r.remark

        s = await scrape(port)
        base = {"cluster": "DefaultCluster", "node_type": "broker", "node_id": "broker-a"}
        labels_in = {**base, "topic": TOPIC, "message_type": "normal", "is_system": "false"}
        assert value(s, "rocketmq_messages_in_total", **labels_in) == N
        assert value(s, "rocketmq_throughput_in_total", **labels_in) == stored_bytes
        assert value(s, "rocketmq_message_size_count", **labels_in) == N
        assert value(s, "rocketmq_message_size_sum", **labels_in) == stored_bytes
        assert value(s, "rocketmq_message_size_bucket", **labels_in, le="1024.0") == N
        assert value(s, "rocketmq_message_size_bucket", **labels_in, le="+Inf") == N
        # exact label sets, J's names
        (in_labels,) = [lab for lab, _ in s["rocketmq_messages_in_total"] if lab.get("topic") == TOPIC]
        assert set(in_labels) == {"cluster", "node_type", "node_id", "topic", "message_type", "is_system"}
        # retry / DLQ topics are not traffic (J): only TOPIC is counted in
        assert {lab["topic"] for lab, _ in s["rocketmq_messages_in_total"]} == {TOPIC}

        labels_out = {**base, "topic": TOPIC, "consumer_group": GROUP, "is_system": "false"}
        assert value(s, "rocketmq_messages_out_total", **labels_out) == M
        assert value(s, "rocketmq_throughput_out_total", **labels_out) == len(got.body)
        (out_labels,) = [lab for lab, _ in s["rocketmq_messages_out_total"]]
        assert set(out_labels) == {"cluster", "node_type", "node_id", "topic", "consumer_group", "is_system"}

        assert value(s, "rocketmq_send_to_dlq_messages_total", **base, consumer_group=GROUP, topic=TOPIC) == K

        # lag equals the broker's own offsets diff, summed over the topic's queues
        tc = broker.topics.get(TOPIC)
        assert tc is not None
        own_lag = sum(
            broker.store.get_max_offset_in_queue(TOPIC, q) - max(broker.offsets.query(GROUP, TOPIC, q), 0)
            for q in range(tc.read_queue_nums)
        )
        lag_labels = {**base, "consumer_group": GROUP, "topic": TOPIC, "is_retry": "false", "is_system": "false"}
        assert own_lag == N - M
        assert value(s, "rocketmq_consumer_lag_messages", **lag_labels) == own_lag
        assert value(s, "rocketmq_consumer_ready_messages", **lag_labels) == N - M
        assert value(s, "rocketmq_consumer_inflight_messages", **lag_labels) == 0
        assert value(s, "rocketmq_consumer_lag_latency_milliseconds", **lag_labels) >= 0

        assert value(s, "rocketmq_topic_number", **base) == len(broker.topics.all())
        assert value(s, "rocketmq_consumer_group_number", **base) == len(broker.groups.all())
        assert value(s, "rocketmq_broker_permission", **base) == 6
        conns = s["rocketmq_consumer_connections"]
        assert [(lab["consumer_group"], lab["consume_mode"], lab["protocol_type"], v) for lab, v in conns] == [
            (GROUP, "push", "remoting", 1.0)
        ]

        rpc = {**base, "protocol_type": "remoting", "result": "success", "is_long_polling": "false"}
        name = "rocketmq_rpc_latency_milliseconds_count"
        assert value(s, name, **rpc, request_code="send_message_v2", response_code="success") == N
        assert value(s, name, **rpc, request_code="pull_message", response_code="success") == 1
        assert value(s, name, **rpc, request_code="consumer_send_msg_back", response_code="success") == K
        assert (
            value(
                s,
                "rocketmq_rpc_latency_milliseconds_bucket",
                **rpc,
                request_code="send_message_v2",
                response_code="success",
                le="+Inf",
            )
            == N
        )
        assert value(s, "rocketmq_storage_dispatch_behind_bytes", **base) >= 0
        assert value(s, "rocketmq_storage_size_bytes", **base) > 0

        # a deleted topic leaves the metrics (bounded cardinality)
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic=TOPIC), 5.0)
        assert r.code == ResponseCode.SUCCESS
        s = await scrape(port)
        for fam in ("rocketmq_messages_in_total", "rocketmq_messages_out_total", "rocketmq_consumer_lag_messages"):
            assert all(lab.get("topic") != TOPIC for lab, _ in s.get(fam, [])), fam

        # OpenMetrics when asked for
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
        )
        text = await asyncio.to_thread(lambda: urllib.request.urlopen(req, timeout=5).read().decode())
        assert text.rstrip().endswith("# EOF")


async def test_healthz_and_readyz_follow_registration(tmp_path: Path) -> None:
    """/readyz is 503 while no name server has taken the registration, 200 once one has."""
    async with run_namesrv(tmp_path / "probe") as probe:
        port = probe.port  # a port that was free; nothing listens on it once the probe stops
    ns_addr = f"127.0.0.1:{port}"
    async with run_broker(ns_addr, tmp_path, registerNameServerPeriod=100, **METRICS) as broker:
        assert broker.metrics is not None
        mport = broker.metrics.port
        assert (await http_get(mport, "/healthz"))[0] == 200
        status, body = await http_get(mport, "/readyz")
        assert status == 503 and "not registered" in body
        async with run_namesrv(tmp_path / "ns", listenPort=port):

            async def ready() -> bool:
                return (await http_get(mport, "/readyz"))[0] == 200

            await eventually(ready, timeout=10, what="the broker to become ready", step=0.05)
        assert (await http_get(mport, "/nope"))[0] == 404


async def test_metrics_off_by_default(tmp_path: Path) -> None:
    async with run_broker(None, tmp_path) as broker:
        assert broker.metrics is None


async def test_namesrv_metrics(tmp_path: Path, client: RemotingClient) -> None:
    """The name server's own endpoint: RPC latency by request code, route-table gauges, health and readiness."""
    async with run_namesrv(tmp_path, **METRICS) as ns, run_broker(ns, tmp_path):
        assert ns.metrics is not None
        port = ns.metrics.port
        assert (await http_get(port, "/healthz"))[0] == 200
        assert (await http_get(port, "/readyz"))[0] == 200
        base = {"node_type": "namesrv", "node_id": ns.addr}
        rpc = {**base, "protocol_type": "remoting", "result": "success", "response_code": "success"}
        # the broker asks for cluster info too (a master looks for listed slaves at start): count ours as the delta
        before = value_or_0(
            await scrape(port), "rocketmq_rpc_latency_milliseconds_count", **rpc, request_code="get_broker_cluster_info"
        )
        r = await client.invoke(ns.addr, simple_cmd(RequestCode.GET_BROKER_CLUSTER_INFO), 5.0)
        assert r.code == ResponseCode.SUCCESS
        s = await scrape(port)
        assert value(s, "rocketq_namesrv_live_brokers", **base) == 1
        assert value(s, "rocketq_namesrv_clusters", **base) == 1
        assert (
            value(s, "rocketmq_rpc_latency_milliseconds_count", **rpc, request_code="get_broker_cluster_info")
            == before + 1
        )
        assert value(s, "rocketmq_rpc_latency_milliseconds_count", **rpc, request_code="register_broker") >= 1


async def test_store_and_long_polling_metrics(tmp_path: Path, client: RemotingClient) -> None:
    """What the store knows and J hides: group-commit size and fsync latency (SYNC_FLUSH); long-poll holds and the
    RPC latency label is_long_polling on a held pull."""
    async with run_broker(None, tmp_path, flushDiskType="SYNC_FLUSH", **METRICS) as broker:
        assert broker.metrics is not None
        for i in range(5):
            r = await send(client, broker.addr, "SyncT", b"s%d" % i, queue_id=0)
            assert r.code == ResponseCode.SUCCESS, r.remark
        r = await pull(client, broker.addr, "HoldG", "SyncT", 1, 0, sys_flag=0x2 | 0x4, suspend_ms=50)
        assert r.code == ResponseCode.PULL_NOT_FOUND
        s = await scrape(broker.metrics.port)
        base = {"node_id": "broker-a", "storage_type": "local", "storage_medium": "disk"}
        # every acknowledged put was released by exactly one fsync: the sizes add up to the puts
        assert value(s, "rocketq_store_group_commit_size_sum", **base) == 5
        assert 1 <= value(s, "rocketq_store_group_commit_size_count", **base) <= 5
        assert value(s, "rocketq_store_fsync_latency_milliseconds_count", **base) >= 1
        assert value(s, "rocketq_long_polling_holds_total", node_id="broker-a") == 1
        assert value(s, "rocketq_long_polling_held_requests", node_id="broker-a") == 0
        held = value(
            s,
            "rocketmq_rpc_latency_milliseconds_count",
            request_code="pull_message",
            response_code="pull_not_found",
            is_long_polling="true",
        )
        assert held == 1
        assert value(s, "rocketmq_processor_watermark", processor="send") == 0


async def test_metrics_port_in_use_is_one_clear_error(tmp_path: Path) -> None:
    import socket

    from broker.app import BrokerStartError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        taken = s.getsockname()[1]
        with pytest.raises(BrokerStartError, match=f"metricsPromExporterPort {taken}"):
            async with run_broker(None, tmp_path, **{**METRICS, "metricsPromExporterPort": taken}):
                pass


async def test_transaction_metrics(tmp_path: Path) -> None:
    """rocketmq_commit_messages_total / rocketmq_rollback_messages_total per real topic, from a transactional
    producer of the SDK committing twice and rolling back once."""
    from client import LocalTransactionState, Message, Producer

    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, **METRICS) as broker:
        assert broker.metrics is not None
        async with Producer("PG_tx_metrics", namesrv_addr=ns.addr) as p:
            for state in ("COMMIT_MESSAGE", "ROLLBACK_MESSAGE", "COMMIT_MESSAGE"):
                want = LocalTransactionState[state]
                _r, got = await p.send_message_in_transaction(Message("TxMetricsT", b"x"), lambda m, a, w=want: w)
                assert got is want
        s = await scrape(broker.metrics.port)
        assert value(s, "rocketmq_commit_messages_total", node_id="broker-a", topic="TxMetricsT") == 2
        assert value(s, "rocketmq_rollback_messages_total", node_id="broker-a", topic="TxMetricsT") == 1


async def test_create_execution_time(tmp_path: Path, client: RemotingClient) -> None:
    """J 5.3's topic / group create execution time histograms, by invocation status."""
    from protocol.command import RemotingCommand
    from protocol.headers import CreateTopicRequestHeader

    def create(topic: str) -> RemotingCommand:
        h = CreateTopicRequestHeader(topic, "TBW102", 2, 2, 6)
        return RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, h.to_ext_fields())

    async with run_broker(None, tmp_path, **METRICS) as broker:
        assert broker.metrics is not None
        assert (await client.invoke(broker.addr, create("CreatedT"), 5.0)).code == ResponseCode.SUCCESS
        assert (await client.invoke(broker.addr, create("bad topic!"), 5.0)).code != ResponseCode.SUCCESS
        s = await scrape(broker.metrics.port)
        name = "rocketmq_topic_create_execution_time_milliseconds_count"
        assert value(s, name, node_id="broker-a", invocation_status="success", is_system="false") == 1
        assert value(s, name, node_id="broker-a", invocation_status="failure", is_system="false") == 1
        assert "rocketmq_consumer_group_create_execution_time_milliseconds_count" not in s  # none created yet
