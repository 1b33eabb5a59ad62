"""TPS windows that mean something: while a push consumer consumes at a known, steady rate, ``mqadmin
consumerProgress`` shows that rate as Consume TPS (within 20 %), ``brokerStatus`` shows non-zero putTps /
getTransferedTps, ``clusterList`` prints all of J's columns with a RocketMQ version string, and
VIEW_BROKER_STATS_DATA (statsAll's source) answers minute/hour/day sums. The rates come from the broker's
once-a-second samples, not from the time between two admin calls.
"""

from __future__ import annotations

import asyncio
import json
import re

from client import ConsumeResult, Message, Producer, PushConsumer
from protocol.codes import RequestCode, ResponseCode
from protocol.message_ext import MessageExt
from protocol.remoting import RemotingClient
from tests.integration.broker_wire import simple_cmd
from tests.integration.client_support import Cluster, until
from tests.integration.test_mqadmin import mqadmin

RATE = 40.0  # messages per second the producer paces
TOPIC, GROUP = "TpsTopic", "CG_tps"


async def test_consume_tps_matches_a_known_rate(cluster: Cluster) -> None:
    await cluster.create_topic(TOPIC, 2)
    loop = asyncio.get_running_loop()
    received: list[float] = []

    async def on_msgs(msgs: list[MessageExt]) -> ConsumeResult:
        received.extend(loop.time() for _ in msgs)
        return ConsumeResult.SUCCESS

    consumer = PushConsumer(GROUP, namesrv_addr=cluster.ns_addr)
    consumer.subscribe(TOPIC, "*", on_msgs)
    stop = asyncio.Event()

    async def produce() -> None:
        async with Producer("PG_tps", namesrv_addr=cluster.ns_addr) as p:
            start, i = loop.time(), 0
            while not stop.is_set():
                await p.send(Message(TOPIC, b"tps-%d" % i))
                i += 1
                # pacing the workload (not synchronisation): the i-th message leaves at start + i / RATE
                await asyncio.sleep(max(0.0, start + i / RATE - loop.time()))

    async with consumer:
        await until(
            lambda: len([mq for mq in consumer.assignment if mq.topic == TOPIC]) == 2, what="both queues assigned"
        )
        producer = asyncio.create_task(produce())
        try:
            await until(lambda: received and loop.time() - received[0] >= 4.0, timeout=30, what="4 s of consuming")
            rc, out, err = await mqadmin("consumerProgress", "-n", cluster.ns_addr, "-g", GROUP)
            # the known rate: what the consumer actually received, from its first message to now
            known = len(received) / (loop.time() - received[0])
            assert rc == 0, err
            m = re.search(r"Consume TPS: ([0-9.]+)", out)
            assert m is not None, out
            shown = float(m.group(1))
            assert shown > 0
            assert abs(shown - known) <= 0.2 * known, f"Consume TPS {shown} vs known rate {known:.2f}"

            rc, out, err = await mqadmin("brokerStatus", "-n", cluster.ns_addr, "-b", cluster.broker.addr)
            assert rc == 0, err
            table = dict(re.findall(r"^(\w+)\s*: (.*)$", out, re.M))
            assert float(table["putTps"].split()[1]) > 0  # the 60 s window
            assert float(table["getTransferedTps"].split()[1]) > 0
            assert table["brokerVersionDesc"] == "V4_9_7" and table["rocketqVersion"].startswith("rocketq-")

            rc, out, err = await mqadmin("clusterList", "-n", cluster.ns_addr)
            assert rc == 0, err
            head, row = out.splitlines()[:2]
            for col in ("#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Version", "#InTPS(LOAD)",
                        "#OutTPS(LOAD)", "#PCWait(ms)", "#Hour", "#SPACE"):  # fmt: skip
                assert col in head
            fields = row.split()
            assert fields[:5] == ["DefaultCluster", "broker-a", "0", cluster.broker.addr, "V4_9_7"]
            in_tps = float(fields[5].split("(")[0])
            assert in_tps > 0  # 10 s window of puts while the producer runs
        finally:
            stop.set()
            await producer

    client = RemotingClient()
    try:
        cmd = simple_cmd(RequestCode.VIEW_BROKER_STATS_DATA, statsName="GROUP_GET_NUMS", statsKey=f"{TOPIC}@{GROUP}")
        await until(lambda: cluster.broker.stats.series("GROUP_GET_NUMS", f"{TOPIC}@{GROUP}") is not None)
        r = await client.invoke(cluster.broker.addr, cmd, 5.0)
        assert r.code == ResponseCode.SUCCESS, r.remark
        data = json.loads(r.body)
        assert set(data) == {"statsMinute", "statsHour", "statsDay"}
        assert 0 < data["statsMinute"]["sum"] <= data["statsDay"]["sum"] <= len(received)
        cmd = simple_cmd(RequestCode.VIEW_BROKER_STATS_DATA, statsName="TOPIC_PUT_NUMS", statsKey="NoSuchTopic")
        r = await client.invoke(cluster.broker.addr, cmd, 5.0)
        assert r.code == ResponseCode.SYSTEM_ERROR and "not exist" in (r.remark or "")
    finally:
        await client.close()
