"""``mqadmin``'s message, topic-permission and group commands (``cli_messages``, ``cli_topics``, ``cli_groups``,
``cli_more``) run as a user runs them (a subprocess) against ONE live name server and broker shared by the module,
with a producer's traffic and a push consumer online: the columns and values printed, ``--json`` parsing, exit
codes — and the defects they fix (a producer's msgId, name-server failover, write permissions honoured by our own
producer on every route including TBW102).
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from broker.app import BrokerApp
from broker.store.request import GetRequest
from client import ConsumeResult, Message, Producer, PushConsumer, SendResult
from client.errors import RouteNotFoundError
from namesrv.app import NamesrvApp
from protocol.bodies import TopicConfig
from protocol.message_ext import MessageExt
from tests.harness import run_broker, run_namesrv
from tests.integration.client_support import until
from tests.integration.test_mqadmin import mqadmin

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOPIC = "OpsTopic"  # 4 queues, 12 messages, consumed by CG_ops (online for the whole module)
PRINT = "PrintTopic"  # 2 queues, 6 messages (TagA x4, TagB x2), no consumer


@dataclass
class Live:
    ns: NamesrvApp
    broker: BrokerApp
    sent: list[SendResult]
    printed: list[SendResult]
    consumer: PushConsumer
    tmp: Path

    @property
    def ns_addr(self) -> str:
        return self.ns.addr


async def _routed(ns_addr: str, topic: str) -> bool:
    rc, _out, _err = await mqadmin("topicRoute", "-n", ns_addr, "-t", topic)
    return rc == 0


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def live(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Live]:
    tmp = tmp_path_factory.mktemp("ops")
    async with run_namesrv(tmp) as ns, run_broker(ns, tmp) as broker:
        broker.topics.put(TopicConfig.with_queues(TOPIC, 4))
        broker.topics.put(TopicConfig.with_queues(PRINT, 2))
        await until(lambda: _routed(ns.addr, PRINT), timeout=15, what="the routes")
        seen: list[bytes] = []

        async def listener(msgs: list[MessageExt]) -> ConsumeResult:
            seen.extend(m.body for m in msgs)
            return ConsumeResult.SUCCESS

        consumer = PushConsumer("CG_ops", namesrv_addr=ns.addr)
        consumer.subscribe(TOPIC, "*", listener)
        async with consumer:
            await until(lambda: len([q for q in consumer.assignment if q.topic == TOPIC]) == 4, what="assignment")
            async with Producer("PG_ops", namesrv_addr=ns.addr) as p:
                sent = [await p.send(Message(TOPIC, b"ops-%d" % i, tags="TagA", keys=f"k{i}")) for i in range(12)]
                printed = [
                    await p.send(Message(PRINT, b"print-%d" % i, tags="TagA" if i % 3 else "TagB")) for i in range(6)
                ]
            await until(lambda: len(seen) == 12, what="12 messages consumed")
            await until(
                lambda: sum(max(o, 0) for o in broker.offsets.query_all("CG_ops", TOPIC).values()) == 12,
                what="the committed offsets",
            )
            yield Live(ns, broker, sent, printed, consumer, tmp)


async def ok(*args: str) -> str:
    rc, out, err = await mqadmin(*args)
    assert rc == 0, (args, out, err)
    assert "Traceback" not in err, err
    return out


async def ok_json(*args: str) -> object:
    return json.loads(await ok(*args, "--json"))


def rows(out: str, first: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.split()[:1] == [first]]


def block(out: str) -> dict[str, str]:
    """The ``%-20s %s`` message block as {label: value}."""
    fields = {}
    for line in out.splitlines():
        label, _, value = line.partition(": ")
        if value and not line.startswith("MessageTrack"):
            fields[label.strip() + ":"] = value.strip()
    return fields


# -- message ids -----------------------------------------------------------------------------------------------------


async def test_query_msg_by_id_takes_a_producers_unique_id_and_an_offset_id(live: Live) -> None:
    r = live.sent[3]
    assert r.msg_id != r.offset_msg_id
    for mid in (r.msg_id, r.offset_msg_id):
        out = await ok("queryMsgById", "-n", live.ns_addr, "-i", mid)
        f = block(out)
        assert f["OffsetID:"] == r.offset_msg_id
        assert (f["Topic:"], f["Tags:"], f["Keys:"]) == (TOPIC, "[TagA]", "[k3]")
        assert (f["Queue ID:"], f["Queue Offset:"]) == (str(r.message_queue.queue_id), str(r.queue_offset))
        assert f"UNIQ_KEY={r.msg_id}" in f["Properties:"]
        assert Path(f["Message Body Path:"]).read_bytes() == b"ops-3"
        assert "MessageTrack [consumerGroup=CG_ops, trackType=CONSUMED, exceptionDesc=null]" in out
    data = await ok_json("queryMsgById", "-n", live.ns_addr, "-i", r.msg_id, "-t", TOPIC)
    assert isinstance(data, dict) and data["OffsetID"] == r.offset_msg_id and data["Message Body"] == "ops-3"
    assert data["Tracks"] == [{"consumerGroup": "CG_ops", "trackType": "CONSUMED"}]


async def test_query_msg_by_unique_key(live: Live) -> None:
    r = live.sent[5]
    out = await ok("queryMsgByUniqueKey", "-n", live.ns_addr, "-i", r.msg_id, "-t", TOPIC)
    assert block(out)["OffsetID:"] == r.offset_msg_id and block(out)["Keys:"] == "[k5]"
    out = await ok("queryMsgByUniqueKey", "-n", live.ns_addr, "-i", r.msg_id, "-t", TOPIC, "-a")
    assert out.count("OffsetID:") == 1
    data = await ok_json("queryMsgByUniqueKey", "-n", live.ns_addr, "-i", r.msg_id, "-t", TOPIC)
    assert isinstance(data, dict) and data["Queue Offset"] == r.queue_offset
    rc, _out, err = await mqadmin("queryMsgByUniqueKey", "-n", live.ns_addr, "-i", "0A" * 16, "-t", TOPIC)
    assert rc == 1 and "Message not found" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


async def test_query_msg_by_offset(live: Live) -> None:
    r = live.printed[0]
    mq = r.message_queue
    args = ("-t", PRINT, "-b", mq.broker_name, "-i", str(mq.queue_id), "-o", str(r.queue_offset))
    out = await ok("queryMsgByOffset", "-n", live.ns_addr, *args)
    assert block(out)["OffsetID:"] == r.offset_msg_id and "WARN: No Consumer" in out
    data = await ok_json("queryMsgByOffset", "-n", live.ns_addr, *args)
    assert isinstance(data, dict) and data["Message Body"] == "print-0" and data["Tracks"] == []


# -- name-server failover --------------------------------------------------------------------------------------------


async def test_admin_fails_over_to_the_next_name_server(live: Live) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        down = f"127.0.0.1:{s.getsockname()[1]}"
    both = f"{down};{live.ns_addr}"
    out = await ok("topicRoute", "-n", both, "-t", TOPIC)
    assert json.loads(out)["queueDatas"][0]["writeQueueNums"] == 4
    out = await ok("clusterList", "-n", both)
    assert live.broker.addr in out
    assert TOPIC in (await ok("topicList", "-n", both)).split()


# -- write permissions -----------------------------------------------------------------------------------------------


async def _send(ns_addr: str, topic: str) -> SendResult:
    async with Producer("PG_perm", namesrv_addr=ns_addr, send_timeout_ms=1500) as p:
        return await p.send(Message(topic, b"perm"))


async def test_wipe_and_add_write_perm_are_honoured_by_our_producer(live: Live) -> None:
    name = live.broker.config.identity.broker_name
    out = await ok("wipeWritePerm", "-n", live.ns_addr, "-b", name)
    assert out.startswith(f"wipe write perm of broker[{name}] in name server[{live.ns_addr}] OK, ")
    assert int(out.split()[-1]) >= 2
    try:
        with pytest.raises(RouteNotFoundError, match="No route info of this topic: OpsTopic"):
            await _send(live.ns_addr, TOPIC)  # a known topic: no writable queue, no TBW102 fallback
        with pytest.raises(RouteNotFoundError, match="No route info of this topic: NoSuchTopicYet"):
            await _send(live.ns_addr, "NoSuchTopicYet")  # the TBW102 route is not writable either
    finally:
        out = await ok("addWritePerm", "-n", live.ns_addr, "-b", name)
    assert out.startswith(f"add write perm of broker[{name}] in name server[{live.ns_addr}] OK, ")
    assert (await _send(live.ns_addr, PRINT + "Perm")).send_status.name == "SEND_OK"


async def test_update_topic_perm(live: Live) -> None:
    topic = "PermTopic"
    live.broker.topics.put(TopicConfig.with_queues(topic, 2))
    await until(lambda: _routed(live.ns_addr, topic), what="PermTopic's route")
    addr = live.broker.addr
    out = await ok("updateTopicPerm", "-n", live.ns_addr, "-b", addr, "-t", topic, "-p", "4")
    assert out.splitlines()[0] == f"update topic perm from 6 to 4 in {addr} success."
    assert out.splitlines()[1] == (
        f"TopicConfig [topicName={topic}, readQueueNums=2, writeQueueNums=2, perm=R--, topicFilterType=SINGLE_TAG, "
        "topicSysFlag=0, order=false]."
    )
    await until(lambda: _perm_in_route(live.ns_addr, topic, 4), what="perm 4 in the route")
    with pytest.raises(RouteNotFoundError):
        await _send(live.ns_addr, topic)
    out = await ok("updateTopicPerm", "-n", live.ns_addr, "-c", "DefaultCluster", "-t", topic, "-p", "6")
    assert out.splitlines()[0] == f"update topic perm from 4 to 6 in {addr} success."
    await until(lambda: _perm_in_route(live.ns_addr, topic, 6), what="perm 6 in the route")
    assert (await _send(live.ns_addr, topic)).send_status.name == "SEND_OK"
    rc, _out, err = await mqadmin("updateTopicPerm", "-n", live.ns_addr, "-b", addr, "-t", topic, "-p", "5")
    assert rc == 2 and "expected 2 (W), 4 (R) or 6 (RW)" in err


async def _perm_in_route(ns_addr: str, topic: str, perm: int) -> bool:
    rc, out, _err = await mqadmin("topicRoute", "-n", ns_addr, "-t", topic)
    return rc == 0 and json.loads(out)["queueDatas"][0]["perm"] == perm


# -- reading topics --------------------------------------------------------------------------------------------------


async def test_print_msg_and_by_queue(live: Live) -> None:
    out = await ok("printMsg", "-n", live.ns_addr, "-t", PRINT)
    lines = [ln for ln in out.splitlines() if ln.startswith("MSGID: ")]
    assert sorted(ln.split()[1] for ln in lines) == sorted(r.msg_id for r in live.printed)
    assert all(ln.endswith(f"BODY: print-{i}") for i, ln in [(int(ln.rsplit("-", 1)[1]), ln) for ln in lines])
    assert len(rows(out, "minOffset=0,")) == 2
    data = await ok_json("printMsg", "-n", live.ns_addr, "-t", PRINT, "-s", "TagB")
    assert isinstance(data, list) and sorted(m["body"] for m in data) == ["print-0", "print-3"]
    name = live.broker.config.identity.broker_name
    q0 = [r for r in live.printed if r.message_queue.queue_id == 0]
    out = await ok(
        "printMsgByQueue", "-n", live.ns_addr, "-t", PRINT, "-a", name, "-i", "0", "-p", "true", "-f", "true"
    )
    assert len([ln for ln in out.splitlines() if ln.startswith("MSGID: ")]) == len(q0)
    counts = {r[1]: int(r[3]) for r in rows(out, "Tag:")}
    assert sum(counts.values()) == len(q0)
    data = await ok_json("printMsgByQueue", "-n", live.ns_addr, "-t", PRINT, "-a", name, "-i", "0", "-f", "true")
    assert isinstance(data, dict) and sum(t["count"] for t in data["tagCounts"]) == len(q0)


async def test_consume_message_reads_without_committing(live: Live) -> None:
    out = await ok("consumeMessage", "-n", live.ns_addr, "-t", PRINT, "-c", "4")
    assert len([ln for ln in out.splitlines() if ln.startswith("MSGID: ")]) == 4
    data = await ok_json("consumeMessage", "-n", live.ns_addr, "-t", PRINT, "-c", "100")
    assert isinstance(data, list) and sorted(m["body"] for m in data) == sorted(f"print-{i}" for i in range(6))
    assert live.broker.offsets.query_all("TOOLS_CONSUMER", PRINT) == {}


# -- probes ----------------------------------------------------------------------------------------------------------


async def test_send_msg_status_and_check_msg_send_rt(live: Live) -> None:
    name = live.broker.config.identity.broker_name
    out = await ok("sendMsgStatus", "-n", live.ns_addr, "-b", name, "-c", "2", "-s", "16")
    lines = out.splitlines()
    assert len(lines) == 2 and all(ln.startswith("rt=") and "sendStatus=SEND_OK" in ln for ln in lines)
    live.broker.topics.put(TopicConfig.with_queues("RtTopic", 2))
    await until(lambda: _routed(live.ns_addr, "RtTopic"), what="RtTopic's route")
    out = await ok("checkMsgSendRT", "-n", live.ns_addr, "-t", "RtTopic", "-a", "4", "-s", "32")
    assert out.splitlines()[0].split() == ["#Broker", "Name", "#QID", "#Send", "Result", "#RT"]
    got = rows(out, name)
    assert [r[1] for r in got] == ["0", "1", "0", "1"] and all(r[2] == "true" for r in got)
    assert out.splitlines()[-1].startswith("Avg RT: ")
    data = await ok_json("checkMsgSendRT", "-n", live.ns_addr, "-t", "RtTopic", "-a", "2")
    assert isinstance(data, dict) and len(data["results"]) == 2


# -- groups ----------------------------------------------------------------------------------------------------------


async def test_consumer_progress_without_group_and_with_client_ip(live: Live) -> None:
    ns = live.ns_addr
    out, all_json, with_ip, one_json = await asyncio.gather(
        ok("consumerProgress", "-n", ns),
        ok("consumerProgress", "-n", ns, "--json"),
        ok("consumerProgress", "-n", ns, "-g", "CG_ops", "-s"),
        ok("consumerProgress", "-n", ns, "-g", "CG_ops", "--json"),
    )
    assert out.splitlines()[0].split() == ["#Group", "#Count", "#Version", "#Type", "#Model", "#TPS", "#Diff", "Total"]
    row = rows(out, "CG_ops")[0]
    assert row[1] == "1" and row[3:5] == ["PUSH", "CLUSTERING"] and row[-1] == "0"
    assert any(d["Group"] == "CG_ops" and d["Diff Total"] == 0 and d["Count"] == 1 for d in json.loads(all_json))
    assert "#Client IP" in with_ip.splitlines()[0]
    ip = live.consumer.instance.client_id.split("@")[0]
    got = rows(with_ip, TOPIC)
    assert len(got) == 4 and all(r[5] == ip for r in got)
    data = json.loads(one_json)
    assert data["diffTotal"] == 0 and len(data["queues"]) >= 4


async def test_get_consumer_config_and_stats_all(live: Live) -> None:
    ns = live.ns_addr
    out, cfg_json, stats, stats_json = await asyncio.gather(
        ok("getConsumerConfig", "-n", ns, "-g", "CG_ops"),
        ok("getConsumerConfig", "-n", ns, "-g", "CG_ops", "--json"),
        ok("statsAll", "-n", ns, "-t", TOPIC),
        ok("statsAll", "-n", ns, "-t", PRINT, "--json"),
    )
    fields = {ln.split("=  ")[0].strip(): ln.split("=  ")[1] for ln in out.splitlines() if "=  " in ln}
    assert fields["groupName"] == "CG_ops" and fields["consumeEnable"] == "true"
    assert fields["brokerName"] == live.broker.config.identity.broker_name
    assert json.loads(cfg_json)[0]["config"]["retryMaxTimes"] == 16
    assert stats.splitlines()[0].split()[:3] == ["#Topic", "#Consumer", "Group"]
    assert rows(stats, TOPIC)[0][:3] == [TOPIC, "CG_ops", "0"]
    data = json.loads(stats_json)
    assert isinstance(data, list) and len(data) == 1
    in_tps = data[0].pop("InTPS")  # a rate over the last minute: the fixture's six sends, so small but real
    assert float(in_tps) >= 0 and in_tps == f"{float(in_tps):.2f}"
    assert data == [
        {
            "Topic": PRINT,
            "Consumer Group": "",
            "Accumulation": 0,
            "OutTPS": "",
            "InMsg24Hour": 6,  # the six messages the fixture sent to PRINT
            "OutMsg24Hour": "NO_CONSUMER",
        }
    ]


async def test_skip_accumulated_message(live: Live) -> None:
    out = await ok("skipAccumulatedMessage", "-n", live.ns_addr, "-g", "CG_ops", "-t", TOPIC)
    got = {int(r[1]): int(r[2]) for r in rows(out, live.broker.config.identity.broker_name)}
    assert got == {q: live.broker.store.get_max_offset_in_queue(TOPIC, q) for q in range(4)}
    data = await ok_json("skipAccumulatedMessage", "-n", live.ns_addr, "-g", "CG_ops", "-t", TOPIC)
    assert isinstance(data, list) and len(data) == 4


# -- topics ----------------------------------------------------------------------------------------------------------


async def test_order_conf_allocate_topic_list_and_route(live: Live) -> None:
    name = live.broker.config.identity.broker_name
    ns = live.ns_addr

    async def order_conf() -> None:
        out = await ok("updateOrderConf", "-n", ns, "-t", TOPIC, "-m", "put", "-v", f"{name}:4")
        assert out == f"update orderConf success. topic=[{TOPIC}], orderConf=[{name}:4]\n"
        got = await ok_json("updateOrderConf", "-n", ns, "-t", TOPIC, "-m", "get")
        assert got == {"topic": TOPIC, "orderConf": f"{name}:4"}
        await ok("updateOrderConf", "-n", ns, "-t", TOPIC, "-m", "delete")
        out = await ok("updateOrderConf", "-n", ns, "-t", TOPIC, "-m", "get")
        assert out.startswith(f"get orderConf success. topic=[{TOPIC}], orderConf=[]")

    _, allocated, listed, listed_json, route, route_json = await asyncio.gather(
        order_conf(),
        ok("allocateMQ", "-n", ns, "-t", TOPIC, "-i", "10.0.0.1,10.0.0.2"),
        ok("topicList", "-n", ns, "-c"),
        ok("topicList", "-n", ns, "--json"),
        ok("topicRoute", "-n", ns, "-t", TOPIC, "-l"),
        ok("topicRoute", "-n", ns, "-t", TOPIC, "--json"),
    )
    result = json.loads(allocated)
    assert {ip: [q["queueId"] for q in qs] for ip, qs in result["result"].items()} == {
        "10.0.0.1": [0, 1],
        "10.0.0.2": [2, 3],
    }
    assert listed.splitlines()[0].split() == ["#Cluster", "Name", "#Topic", "#Consumer", "Group"]
    assert ["DefaultCluster", TOPIC, "CG_ops"] in rows(listed, "DefaultCluster")
    assert TOPIC in json.loads(listed_json)
    assert route.splitlines()[0].split() == [
        "#ClusterName", "#BrokerName", "#BrokerAddrs", "#ReadQueue", "#WriteQueue", "#Perm"
    ]  # fmt: skip
    assert rows(route, "DefaultCluster")[0] == ["DefaultCluster", name, f'{{"0":"{live.broker.addr}"}}', "4", "4", "6"]
    assert rows(route, "Total:")[0] == ["Total:", "1", "4", "4"]
    assert json.loads(route_json)["queueDatas"][0]["readQueueNums"] == 4


async def test_cluster_list_more_stats(live: Live) -> None:
    out = await ok("clusterList", "-n", live.ns_addr, "-m")
    assert out.splitlines()[0].split()[:4] == ["#Cluster", "Name", "#Broker", "Name"]
    row = rows(out, "DefaultCluster")[0]
    assert row[1] == live.broker.config.identity.broker_name and int(row[4]) >= 18  # today's puts so far
    data = await ok_json("clusterList", "-n", live.ns_addr)
    assert isinstance(data, list) and data[0]["Addr"] == live.broker.addr


async def test_the_command_list(live: Live) -> None:
    _rc, out, _err = await mqadmin()
    names = [ln.split()[0] for ln in out.splitlines()[2:] if ln.strip()]
    assert len(names) >= 50, names
    for name in ("queryMsgByUniqueKey", "addWritePerm", "updateTopicPerm", "statsAll", "printMsg", "consumeMessage"):
        assert name in names


# -- maintenance, exports, producers, clusterRT ----------------------------------------------------------------------


async def test_maintenance_commands(live: Live) -> None:
    addr = live.broker.addr
    for cmd in ("cleanExpiredCQ", "deleteExpiredCommitLog"):
        out = await ok(cmd, "-n", live.ns_addr, "-b", addr)
        assert out.startswith(f"{addr}: success (0 ")  # nothing is old enough in a fresh store
    live.broker.topics.put(TopicConfig.with_queues("Leftover", 1))
    async with Producer("PG_left", namesrv_addr=live.ns_addr) as p:
        await p.send(Message("Leftover", b"x"))
    assert "Leftover" in live.broker.store.topics_and_queues()
    live.broker.topics.delete("Leftover")  # the table forgets it, its consume queue stays
    out = await ok("cleanUnusedTopic", "-n", live.ns_addr, "-c", "DefaultCluster")
    assert out == f"{addr}: success (1 queue(s) of 1 unused topic(s) removed)\n"
    assert "Leftover" not in live.broker.store.topics_and_queues()
    assert TOPIC in live.broker.store.topics_and_queues()


async def test_producer_instances(live: Live) -> None:
    async with Producer("PG_online", namesrv_addr=live.ns_addr) as p:
        await p.send(Message(PRINT, b"hello"))
        out = await ok("producer", "-n", live.ns_addr, "-b", live.broker.addr)
        line = next(ln for ln in out.splitlines() if ln.startswith("producer group (PG_online)"))
        assert f"clientId={p.instance.client_id}" in line and "language=PYTHON" in line
        data = await ok_json("producer", "-n", live.ns_addr, "-b", live.broker.addr)
        assert isinstance(data, dict) and data["PG_online"][0]["clientId"] == p.instance.client_id


async def test_exports(live: Live, tmp_path: Path) -> None:
    d = str(tmp_path)
    out = await ok("exportMetadata", "-n", live.ns_addr, "-c", "DefaultCluster", "-f", d)
    assert out == f"export {tmp_path / 'metadata.json'} success\n"
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["topicConfigTable"][TOPIC]["readQueueNums"] == 4 and "CG_ops" in meta["subscriptionGroupTable"]
    assert "%RETRY%CG_ops" not in meta["topicConfigTable"]
    await ok("exportMetadata", "-n", live.ns_addr, "-b", live.broker.addr, "-f", d, "-t", "-s")
    assert "%RETRY%CG_ops" in json.loads((tmp_path / "topic.json").read_text())["topicConfigTable"]
    await ok("exportConfigs", "-n", live.ns_addr, "-c", "DefaultCluster", "-f", d)
    configs = json.loads((tmp_path / "configs.json").read_text())
    name = live.broker.config.identity.broker_name
    assert configs["brokerConfigs"][name]["brokerName"] == name
    assert configs["clusterScale"] == {"namesrvSize": 1, "masterBrokerSize": 1, "slaveBrokerSize": 0}
    await ok("exportMetrics", "-n", live.ns_addr, "-c", "DefaultCluster", "-f", d)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics[name]["runtimeQuota"]["topicSize"] >= 2
    assert metrics["totalData"]["totalOneDayNum"]["normalOneDayInNum"] >= 18


async def test_cluster_rt(live: Live) -> None:
    out = await ok("clusterRT", "-n", live.ns_addr, "-a", "3", "-s", "16")
    assert out.splitlines()[0].split() == ["#Cluster", "Name", "#Broker", "Name", "#RT", "#successCount", "#failCount"]
    row = rows(out, "DefaultCluster")[0]
    assert row[1] == live.broker.config.identity.broker_name and row[3:] == ["3", "0"]
    data = await ok_json("clusterRT", "-n", live.ns_addr, "-a", "1")
    assert isinstance(data, list) and data[0]["successCount"] == 1


async def test_every_read_command_prints_json(live: Live) -> None:
    """The read commands of ``cli``/``cli_ops`` take ``--json`` too (``cli_json``); each output parses and carries
    the values of the text form."""
    ns, addr, name = live.ns_addr, live.broker.addr, live.broker.config.identity.broker_name
    cid = live.consumer.instance.client_id
    calls = {
        "topicStatus": ("-t", TOPIC),
        "brokerStatus": ("-b", addr),
        "getBrokerConfig": ("-b", addr),
        "getNamesrvConfig": (),
        "queryMsgByKey": ("-t", TOPIC, "-k", "k7"),
        "consumerConnection": ("-g", "CG_ops"),
        "topicClusterList": ("-t", TOPIC),
        "brokerConsumeStats": ("-b", addr),
        "getConsumerStatus": ("-g", "CG_ops", "-t", TOPIC),
        "queryCq": ("-t", PRINT, "-q", "0", "-i", "0", "-c", "2"),
        "consumerStatus": ("-g", "CG_ops", "-i", cid),
    }
    results = await asyncio.gather(*(mqadmin(c, "-n", ns, *args, "--json") for c, args in calls.items()))
    data: dict[str, Any] = {}
    for (cmd, _args), (rc, out, err) in zip(calls.items(), results, strict=True):
        assert rc == 0, (cmd, err)
        data[cmd] = json.loads(out)
    assert sum(q["maxOffset"] for q in data["topicStatus"]) >= 12 and len(data["topicStatus"]) == 4
    assert data["brokerStatus"][addr]["brokerVersionDesc"]
    assert data["getBrokerConfig"][addr]["brokerName"] == name
    assert "orderMessageEnable" in data["getNamesrvConfig"][ns]
    assert [m["keys"] for m in data["queryMsgByKey"]] == ["k7"]
    assert data["consumerConnection"]["connections"][0]["clientId"] == cid
    assert data["consumerConnection"]["subscriptions"][TOPIC] == "*"
    assert data["topicClusterList"] == ["DefaultCluster"]
    assert data["brokerConsumeStats"]["diffTotal"] == 0
    assert {r["clientId"] for r in data["getConsumerStatus"]} == {cid}
    assert data["queryCq"]["minQueueIndex"] == 0 and len(data["queryCq"]["units"]) == 2
    assert data["consumerStatus"][cid]["subscriptions"][TOPIC] == "*"


async def test_query_msg_trace_by_id(live: Live) -> None:
    """Trace records as the Java client writes them (TraceDataEncoder text, the traced msgId as a key)."""
    r = live.sent[0]
    now = int(time.time() * 1000)
    pub = ["Pub", now, "DefaultRegion", "PG_ops", TOPIC, r.msg_id, "TagA", "k0", live.broker.addr, 5, 3, 0,
           r.offset_msg_id, "true"]  # fmt: skip
    sub = ["SubAfter", "req-1", r.msg_id, 7, "false", "k0", 0, now + 5, "CG_ops"]
    other = ["SubAfter", "req-2", "SOME-OTHER-ID", 9, "true", "k9", 0, now, "CG_other"]
    body = "".join("\x01".join(str(x) for x in ctx) + "\x02" for ctx in (pub, sub, other))
    async with Producer("PG_trace", namesrv_addr=live.ns_addr) as p:
        await p.send(Message("RMQ_SYS_TRACE_TOPIC", body.encode(), keys=[r.msg_id, r.offset_msg_id]))
    out, data = await asyncio.gather(
        ok("queryMsgTraceById", "-n", live.ns_addr, "-i", r.msg_id),
        ok_json("queryMsgTraceById", "-n", live.ns_addr, "-i", r.msg_id),
    )
    lines = [ln.split() for ln in out.splitlines() if ln.strip()]
    assert lines[0] == ["#Type", "#ProducerGroup", "#ClientHost", "#SendTime", "#CostTimes", "#Status"]
    assert lines[1][:2] == ["Pub", "PG_ops"] and lines[1][-2:] == ["3ms", "success"]
    assert lines[2] == ["#Type", "#ConsumerGroup", "#ClientHost", "#ConsumerTime", "#CostTimes", "#Status"]
    assert lines[3][:2] == ["Sub", "CG_ops"] and lines[3][-2:] == ["7ms", "failed"]
    assert len(lines) == 4  # the record about another message is not shown
    assert isinstance(data, list) and [(v["msg_type"], v["group_name"]) for v in data] == [
        ("Pub", "PG_ops"),
        ("SubAfter", "CG_ops"),
    ]


async def test_query_msg_by_id_resends(live: Live) -> None:
    topic = "ResendTopic"
    live.broker.topics.put(TopicConfig.with_queues(topic, 1))
    await until(lambda: _routed(live.ns_addr, topic), what="ResendTopic's route")
    async with Producer("PG_resend", namesrv_addr=live.ns_addr) as p:
        r = await p.send(Message(topic, b"again", tags="T", keys="rk"))
    out = await ok("queryMsgById", "-n", live.ns_addr, "-i", r.msg_id, "-t", topic, "-s", "true")
    assert f"prepare resend msg. originalMsgId={r.msg_id}" in out and "sendStatus=SEND_OK" in out
    await until(lambda: live.broker.store.get_max_offset_in_queue(topic, 0) == 2, what="the resent copy")
    copy = live.broker.store.get_message_sync(GetRequest("check", topic, 0, 1, 1)).messages()[0]
    assert (copy.body, copy.tags, copy.keys) == (b"again", "T", ["rk"])
    assert copy.msg_id != r.msg_id  # a new message, with its own unique id


async def test_update_sub_group_prints_javas_form(live: Live) -> None:
    addr = live.broker.addr
    out = await ok(
        "updateSubGroup", "-n", live.ns_addr, "-b", addr, "-g", "CG_new", "-r", "3", "-m", "false", "-w", "0"
    )
    assert out.splitlines() == [
        f"create subscription group to {addr} success.",
        "SubscriptionGroupConfig [groupName=CG_new, consumeEnable=true, consumeBroadcastEnable=false, "
        "retryQueueNums=1, retryMaxTimes=3, consumeFromMinEnable=false, brokerId=0, whichBrokerWhenConsumeSlowly=0, "
        "notifyConsumerIdsChangedEnable=true]",
    ]
    group = live.broker.groups.get("CG_new")
    assert group is not None and group.retry_max_times == 3
