"""5.x (gRPC) traffic is counted where 4.x (remoting) traffic is: after sends through both front ends and a POP
group's receives and acks, ``/metrics`` (``rocketmq_messages_in_total``/``_out_total``, connection gauges with
``protocol_type="grpc"``), ``mqadmin statsAll``, ``brokerStatus``'s TPS windows and VIEW_BROKER_STATS_DATA show all of
it, and ``mqadmin consumerProgress`` without ``-g`` lists the POP group."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from broker.app import BrokerApp
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pb import service_pb2 as spb
from broker.proxy.pb import service_pb2_grpc
from client import Message, Producer
from client.admin.admin_client import AdminClient
from namesrv.app import NamesrvApp
from protocol.codes import RequestCode
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.test_grpc_endpoint import MD, _settings, _telemetry
from tests.integration.test_metrics import scrape, value
from tests.integration.test_mqadmin import mqadmin

TOPIC, GROUP = "CountT", "GID_count"
GRPC_SENDS, REMOTING_SENDS = 5, 4
TOTAL = GRPC_SENDS + REMOTING_SENDS
METRICS = {"metricsExporterType": "PROM", "metricsPromExporterHost": "127.0.0.1", "metricsPromExporterPort": 0}


@pytest.fixture()
async def servers(tmp_path: Path) -> AsyncIterator[tuple[NamesrvApp, BrokerApp]]:
    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, enableProxy=True, grpcServerPort=0, **METRICS) as broker,
    ):
        broker.topics.create_if_absent(TOPIC, 2, 6)
        yield ns, broker


async def _grpc_traffic(stub: Any) -> int:
    """GRPC_SENDS sends, then receives and acks everything on TOPIC as GROUP; returns how many were acked."""
    assert (await _telemetry(stub, _settings(pb.ClientType.PRODUCER, topic=TOPIC))).status.code == pb.Code.OK
    for i in range(GRPC_SENDS):
        m = pb.Message(body=b"g%d" % i)
        m.topic.name = TOPIC
        m.system_properties.message_id = f"01COUNT{i:04d}"
        m.system_properties.message_type = pb.MessageType.NORMAL
        resp = await stub.SendMessage(spb.SendMessageRequest(messages=[m]), metadata=MD)
        assert resp.status.code == pb.Code.OK, resp.status.message
    req = spb.ReceiveMessageRequest(batch_size=32)
    req.group.name = GROUP
    req.message_queue.topic.name = TOPIC
    req.message_queue.id = -1
    req.filter_expression.type, req.filter_expression.expression = pb.FilterType.TAG, "*"
    req.invisible_duration.FromSeconds(30)
    req.long_polling_timeout.FromSeconds(1)
    acked = 0
    while acked < TOTAL:
        got = [r.message async for r in stub.ReceiveMessage(req, metadata=MD, timeout=10) if r.HasField("message")]
        assert got, f"only {acked} of {TOTAL} messages received"
        ack = spb.AckMessageRequest()
        ack.group.name, ack.topic.name = GROUP, TOPIC
        for m in got:
            ack.entries.add(
                message_id=m.system_properties.message_id, receipt_handle=m.system_properties.receipt_handle
            )
        assert (await stub.AckMessage(ack, metadata=MD)).status.code == pb.Code.OK
        acked += len(got)
    return acked


async def test_grpc_traffic_is_counted_with_remoting_traffic(servers: tuple[NamesrvApp, BrokerApp]) -> None:
    ns, broker = servers
    assert broker.proxy is not None and broker.metrics is not None
    # the consumer first, so that its group starts at the queue ends before any message is sent
    async with grpc.aio.insecure_channel(f"127.0.0.1:{broker.proxy.port}") as ch:
        stub = service_pb2_grpc.MessagingServiceStub(ch)
        assert (
            await _telemetry(stub, _settings(pb.ClientType.SIMPLE_CONSUMER, GROUP, TOPIC))
        ).status.code == pb.Code.OK
        async with Producer("PG_count", namesrv_addr=ns.addr) as p:
            for i in range(REMOTING_SENDS):
                await p.send(Message(TOPIC, b"r%d" % i))
        assert await _grpc_traffic(stub) == TOTAL

        samples = await scrape(broker.metrics.port)
        assert value(samples, "rocketmq_messages_in_total", topic=TOPIC) == TOTAL
        assert value(samples, "rocketmq_messages_out_total", topic=TOPIC, consumer_group=GROUP) == TOTAL
        conns = value(samples, "rocketmq_consumer_connections", consumer_group=GROUP, protocol_type="grpc")
        assert conns == 1
        assert value(samples, "rocketmq_producer_connections", protocol_type="grpc") == 1
        assert value(samples, "rocketmq_consumer_lag_messages", consumer_group=GROUP, topic=TOPIC) == 0

        # statsAll and VIEW_BROKER_STATS_DATA read the once-a-second samples: wait for a tick that saw everything
        async def stats_all() -> dict[str, Any] | None:
            rc, out, err = await mqadmin("statsAll", "-n", ns.addr, "-t", TOPIC, "--json")
            assert rc == 0, err
            rows = [r for r in json.loads(out) if r.get("Consumer Group") == GROUP]
            return rows[0] if rows and rows[0]["InMsg24Hour"] == TOTAL and rows[0]["OutMsg24Hour"] == TOTAL else None

        row = await eventually(stats_all, timeout=15, what=f"statsAll showing {TOTAL} in and out")
        assert float(row["InTPS"]) > 0 and float(row["OutTPS"]) > 0

        async with AdminClient(ns.addr) as admin:
            resp = await admin.call(
                broker.addr,
                RequestCode.VIEW_BROKER_STATS_DATA,
                {"statsName": "GROUP_ACK_NUMS", "statsKey": f"{TOPIC}@{GROUP}"},
            )
        assert json.loads(resp.body)["statsDay"]["sum"] == TOTAL

        rc, out, err = await mqadmin("brokerStatus", "-n", ns.addr, "-b", broker.addr)
        assert rc == 0, err
        status = dict(re.findall(r"^(\w+)\s*: (.*)$", out, re.M))
        assert float(status["putTps"].split()[1]) > 0
        # every get of this broker came through gRPC (no remoting consumer here)
        assert float(status["getFoundTps"].split()[1]) > 0 and float(status["getTransferedTps"].split()[1]) > 0


async def test_consumer_progress_lists_pop_groups(servers: tuple[NamesrvApp, BrokerApp]) -> None:
    ns, broker = servers
    assert broker.proxy is not None
    async with grpc.aio.insecure_channel(f"127.0.0.1:{broker.proxy.port}") as ch:
        stub = service_pb2_grpc.MessagingServiceStub(ch)
        assert (
            await _telemetry(stub, _settings(pb.ClientType.SIMPLE_CONSUMER, GROUP, TOPIC))
        ).status.code == pb.Code.OK
        hb = spb.HeartbeatRequest(client_type=pb.ClientType.SIMPLE_CONSUMER)
        hb.group.name = GROUP
        assert (await stub.Heartbeat(hb, metadata=MD)).status.code == pb.Code.OK

        async def listed() -> str | None:
            rc, out, err = await mqadmin("consumerProgress", "-n", ns.addr)
            assert rc == 0, err
            return out if GROUP in out else None

        out = await eventually(listed, timeout=15, what=f"consumerProgress listing {GROUP}")
        line = next(ln for ln in out.splitlines() if GROUP in ln)
        assert line.split()[:2] == [GROUP, "1"]  # one client online
