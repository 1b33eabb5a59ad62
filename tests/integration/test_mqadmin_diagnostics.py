"""``mqadmin``'s diagnostics commands (``client/admin/cli_ops.py``, and ``queryMsgById -g -d``) run as a user runs
them (a subprocess) against in-process name servers and brokers, with real producers and push consumers on the other
side: the values printed (offsets, diffs, groups, connections, the directly-consumed result) and the failure paths
(one line on stderr with the server's code and remark, a non-zero exit; argparse usage errors exit 2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from broker.app import BrokerApp
from client import ConsumeResult, Message, MessageQueue, Producer, PushConsumer, SendResult
from client.admin.admin_client import RunningInfo
from client.admin.formatting import print_running_info
from protocol.message_ext import MessageExt
from protocol.message_properties import tag_hash
from protocol.msg_id import decode_offset_msg_id
from tests.harness import run_broker, run_namesrv
from tests.integration.client_support import Cluster, until
from tests.integration.test_mqadmin import mqadmin


def rows(out: str, first: str) -> list[list[str]]:
    """The whitespace-split lines of ``out`` whose first cell is ``first``."""
    return [line.split() for line in out.splitlines() if line.split()[:1] == [first]]


def one_error_line(err: str, *parts: str) -> None:
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("mqadmin ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in lines[0], (part, lines[0])


async def send(ns_addr: str, topic: str, n: int, *, group: str = "PG_diag", tags: str = "TagA") -> list[SendResult]:
    async with Producer(group, namesrv_addr=ns_addr) as p:
        return [await p.send(Message(topic, f"{topic}-{i}".encode(), tags=tags)) for i in range(n)]


def per_queue(sent: list[SendResult]) -> Counter[MessageQueue]:
    return Counter(r.message_queue for r in sent)


async def consume_and_close(cluster: Cluster, topic: str, group: str, n: int) -> list[SendResult]:
    """``n`` messages sent to ``topic`` and consumed by a push consumer of ``group`` that then closes, leaving its
    offsets committed on the broker (no consumer online afterwards)."""
    seen: list[bytes] = []

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.extend(m.body for m in msgs)
        return ConsumeResult.SUCCESS

    c = PushConsumer(group, namesrv_addr=cluster.ns_addr)
    c.subscribe(topic, "*", listener)
    async with c:
        await until(lambda: sum(q.topic == topic for q in c.assignment) > 0, what=f"{topic}'s queues")
        sent = await send(cluster.ns_addr, topic, n)
        await until(lambda: len(seen) == n, what=f"{n} messages consumed")
    expected = {mq.queue_id: count for mq, count in per_queue(sent).items()}
    await until(
        lambda: {q: o for q, o in cluster.broker.offsets.query_all(group, topic).items() if o > 0} == expected,
        what="the committed offsets",
    )
    return sent


# -- brokerConsumeStats, cloneGroupOffset ----------------------------------------------------------------------------


async def test_broker_consume_stats_offsets_diffs_and_level(cluster: Cluster) -> None:
    await cluster.create_topic("TopicStats", 2)
    first = await consume_and_close(cluster, "TopicStats", "CG_stats", 6)
    late = await send(cluster.ns_addr, "TopicStats", 3)
    consumed, stored = per_queue(first), per_queue(first + late)
    name = cluster.broker.config.identity.broker_name

    rc, out, err = await mqadmin("brokerConsumeStats", "-n", cluster.ns_addr, "-b", cluster.broker.addr)
    assert rc == 0, err
    assert out.splitlines()[0].split() == [
        "#Topic", "#Group", "#Broker", "Name", "#QID", "#Broker", "Offset", "#Consumer", "Offset", "#Diff", "#LastTime"
    ]  # fmt: skip
    got = {int(r[3]): (r[2], int(r[4]), int(r[5]), int(r[6])) for r in rows(out, "TopicStats") if r[1] == "CG_stats"}
    want = {
        q: (name, stored[MessageQueue("TopicStats", name, q)], consumed[MessageQueue("TopicStats", name, q)])
        for q in (0, 1)
    }
    assert got == {q: (b, s, c, s - c) for q, (b, s, c) in want.items()}
    assert out.rstrip().splitlines()[-1] == "Diff Total: 3"

    # -l: only queues at least that far behind; the total stays the broker's
    level = max(s - c for _b, s, c in want.values())
    rc, out, _ = await mqadmin("brokerConsumeStats", "-n", cluster.ns_addr, "-b", cluster.broker.addr, "-l", str(level))
    assert rc == 0
    shown = {int(r[3]) for r in rows(out, "TopicStats")}
    assert shown == {q for q, (_b, s, c) in want.items() if s - c >= level} and shown
    assert "Diff Total: 3" in out
    # -o true: ordered topics only (TopicStats is not)
    rc, out, _ = await mqadmin("brokerConsumeStats", "-n", cluster.ns_addr, "-b", cluster.broker.addr, "-o", "true")
    assert rc == 0 and rows(out, "TopicStats") == [] and "Diff Total: 0" in out


async def test_broker_consume_stats_failures(cluster: Cluster) -> None:
    # the name server does not serve 317: its reply code and remark, exit 1
    rc, out, err = await mqadmin("brokerConsumeStats", "-n", cluster.ns_addr, "-b", cluster.ns_addr)
    assert rc == 1 and out == ""
    one_error_line(err, "mqadmin brokerConsumeStats:", "CODE: 3", "317")
    rc, _out, err = await mqadmin("brokerConsumeStats", "-n", cluster.ns_addr)
    assert rc == 2 and "usage:" in err and "-b/--brokerAddr" in err
    rc, _out, err = await mqadmin("brokerconsumestats", "-n", cluster.ns_addr, "-b", cluster.broker.addr, "-o", "maybe")
    assert rc == 2 and "expected true or false" in err


async def test_clone_group_offset_copies_the_committed_offsets(cluster: Cluster) -> None:
    await cluster.create_topic("TopicClone", 2)
    await consume_and_close(cluster, "TopicClone", "CG_src", 5)
    src = cluster.broker.offsets.query_all("CG_src", "TopicClone")
    assert cluster.broker.offsets.query_all("CG_dest", "TopicClone") == {}

    rc, out, err = await mqadmin(
        "cloneGroupOffset", "-n", cluster.ns_addr, "-s", "CG_src", "-d", "CG_dest", "-t", "TopicClone", "-o", "false"
    )
    assert rc == 0, err
    assert out.strip() == "clone group offset success. srcGroup[CG_src], destGroup=[CG_dest], topic[TopicClone]"
    assert cluster.broker.offsets.query_all("CG_dest", "TopicClone") == src
    # and consumerProgress shows the copy
    rc, out, _ = await mqadmin("consumerProgress", "-n", cluster.ns_addr, "-g", "CG_dest", "-t", "TopicClone")
    assert rc == 0
    assert {int(r[2]): int(r[4]) for r in rows(out, "TopicClone")} == {q: src.get(q, 0) for q in (0, 1)}


async def test_clone_group_offset_failures(cluster: Cluster) -> None:
    rc, out, err = await mqadmin("cloneGroupOffset", "-n", cluster.ns_addr, "-s", "A", "-d", "B", "-t", "NoSuchTopic")
    assert rc == 1 and out == ""
    one_error_line(err, "mqadmin cloneGroupOffset:", "CODE: 17", "NoSuchTopic")
    rc, _out, err = await mqadmin("cloneGroupOffset", "-n", cluster.ns_addr, "-s", "A", "-t", "T")
    assert rc == 2 and "-d/--destGroup" in err


# -- queryCq ---------------------------------------------------------------------------------------------------------


async def test_query_cq_units_subscription_and_range(cluster: Cluster) -> None:
    await cluster.create_topic("TopicCq", 1)

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        return ConsumeResult.SUCCESS

    c = PushConsumer("CG_cq", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicCq", "TagA || TagB", listener)
    async with c:
        await until(lambda: any(q.topic == "TopicCq" for q in c.assignment), what="TopicCq's queue")
        sent = await send(cluster.ns_addr, "TopicCq", 3, tags="TagB")
        ns = cluster.ns_addr

        rc, out, err = await mqadmin(
            "queryCq", "-n", ns, "-t", "TopicCq", "-q", "0", "-i", "1", "-c", "5", "-g", "CG_cq"
        )
        assert rc == 0, err
        assert out.startswith("Subscription data: \n{\n\t")
        assert '"subString": "TagA || TagB"' in out and '"TagB"' in out
        assert "Queue data: \nmax: 3, min: 0\n" in out
        assert [ln for ln in out.splitlines() if ln.startswith("idx: ")] == ["idx: 1", "idx: 2"]
        units = [ln for ln in out.splitlines() if ln.startswith("ConsumeQueueData{")]
        want = []
        for r in sent[1:]:
            _ip, _port, phys = decode_offset_msg_id(r.offset_msg_id)
            want.append(f"ConsumeQueueData{{physicOffset={phys}, physicSize=")
        assert [u[: len(w)] for u, w in zip(units, want, strict=True)] == want
        assert all(f"tagsCode={tag_hash('TagB')}, extendDataJson='null'" in u for u in units)

        # a group that is not online: J's filter-data remark instead of a subscription
        rc, out, _ = await mqadmin("queryCq", "-n", ns, "-t", "TopicCq", "-q", "0", "-i", "0", "-g", "CG_offline")
        assert rc == 0 and "Subscription data" not in out
        assert "Filter data: \nCG_offline@TopicCq is not online!\n" in out
        assert len(rows(out, "idx:")) == 3
        # an index past the end: the range and the broker's remark, no units
        rc, out, _ = await mqadmin(
            "queryCq", "-n", ns, "-t", "TopicCq", "-q", "0", "-i", "7", "-b", cluster.broker.addr
        )
        assert rc == 0 and "max: 3, min: 0" in out and "Index 7 of 0@TopicCq is not exist!" in out
        assert rows(out, "idx:") == []


async def test_query_cq_failures(cluster: Cluster) -> None:
    await cluster.create_topic("TopicCqErr", 1)
    rc, out, err = await mqadmin("queryCq", "-n", cluster.ns_addr, "-t", "TopicCqErr", "-q", "9", "-i", "0")
    assert rc == 1 and out == ""
    one_error_line(err, "mqadmin queryCq:", "CODE: 1", "9@TopicCqErr is not exist!")
    rc, _out, err = await mqadmin("queryCq", "-n", cluster.ns_addr, "-t", "TopicCqErr", "-q", "0")
    assert rc == 2 and "-i/--index" in err
    rc, _out, err = await mqadmin("queryCq", "-n", cluster.ns_addr, "-t", "TopicCqErr", "-q", "x", "-i", "0")
    assert rc == 2 and "invalid int value" in err


# -- queryMsgById -g -d (CONSUME_MESSAGE_DIRECTLY) --------------------------------------------------------------------


async def test_query_msg_by_id_consumes_the_message_directly(cluster: Cluster) -> None:
    await cluster.create_topic("TopicById", 1)
    seen: list[bytes] = []
    answer = [ConsumeResult.SUCCESS]

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.extend(m.body for m in msgs)
        return answer[0]

    c = PushConsumer("CG_byid", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicById", "*", listener)
    async with c:
        await until(lambda: any(q.topic == "TopicById" for q in c.assignment), what="TopicById's queue")
        (sent,) = await send(cluster.ns_addr, "TopicById", 1)
        await until(lambda: seen == [b"TopicById-0"], what="the normal delivery")
        cid = c.instance.client_id

        args = ("queryMsgById", "-n", cluster.ns_addr, "-i", sent.offset_msg_id, "-g", "CG_byid", "-d", cid)
        rc, out, err = await mqadmin(*args)
        assert rc == 0, err
        lines = out.splitlines()
        assert lines[0].split() == ["OffsetID:", sent.offset_msg_id]
        assert ["Topic:", "TopicById"] in [ln.split() for ln in lines]
        assert lines[-1].startswith(
            "ConsumeMessageDirectlyResult [order=false, autoCommit=true, consumeResult=CR_SUCCESS, remark=null, "
            "spentTimeMills="
        )
        assert seen == [b"TopicById-0"] * 2  # the listener ran once more, on that message

        answer[0] = ConsumeResult.RECONSUME_LATER
        rc, out, _ = await mqadmin(*args)
        assert rc == 0 and "consumeResult=CR_LATER" in out.splitlines()[-1]
        assert len(seen) == 3

        # without -d it is the plain query: no direct consumption
        rc, out, _ = await mqadmin("queryMsgById", "-n", cluster.ns_addr, "-i", sent.offset_msg_id, "-g", "CG_byid")
        assert rc == 0 and "ConsumeMessageDirectlyResult" not in out and len(seen) == 3

        # a client that is not connected: the message, then the broker's CONSUMER_NOT_ONLINE
        rc, out, err = await mqadmin(*args[:-1], "10.0.0.9@nobody")
        assert rc == 1 and out.startswith("OffsetID:")
        one_error_line(err, "mqadmin queryMsgById:", "CODE: 206", "<CG_byid> <10.0.0.9@nobody> not online")
        assert len(seen) == 3


# -- consumerStatus, getConsumerStatus -------------------------------------------------------------------------------


async def test_consumer_status_prints_running_info(cluster: Cluster) -> None:
    await cluster.create_topic("TopicRun", 2)
    seen: list[bytes] = []

    async def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.extend(m.body for m in msgs)
        return ConsumeResult.SUCCESS

    c = PushConsumer("CG_run", namesrv_addr=cluster.ns_addr)
    c.subscribe("TopicRun", "TagA", listener)
    async with c:
        await until(lambda: sum(q.topic == "TopicRun" for q in c.assignment) == 2, what="TopicRun's queues")
        counts = per_queue(await send(cluster.ns_addr, "TopicRun", 5))
        await until(lambda: all(c.offset_store.read_memory(mq) == n for mq, n in counts.items()), what="offsets")
        cid = c.instance.client_id

        rc, out, err = await mqadmin("consumerStatus", "-n", cluster.ns_addr, "-g", "CG_run")
        assert rc == 0, err
        assert out.splitlines()[0].split()[:2] == ["001", cid]
        props = {ln.split(":")[0].strip(): ln.split(":", 1)[1].strip() for ln in out.splitlines() if " : " in ln}
        assert props["PROP_CONSUME_TYPE"] == "CONSUME_PASSIVELY" and props["messageModel"] == "CLUSTERING"
        assert props["PROP_NAMESERVER_ADDR"] == cluster.ns_addr
        rt_tps = out.split("#Consumer RT&TPS#")[1].splitlines()
        assert [ln.split()[0] for ln in rt_tps[2:] if ln.strip()][:2] == ["%RETRY%CG_run", "TopicRun"]
        topic_row = next(ln.split() for ln in rt_tps if ln.startswith("TopicRun "))
        assert float(topic_row[4]) > 0 and topic_row[-1] == "0"  # consume OK TPS, failed messages
        assert "Topic: TopicRun" in out and "SubExpression: TagA" in out
        offsets = out.split("#Consumer Offset#")[1].split("#Consumer MQ Detail#")[0]
        assert {(r[1], int(r[2])): int(r[3]) for r in rows(offsets, "TopicRun")} == {
            (mq.broker_name, mq.queue_id): n for mq, n in counts.items()
        }
        assert out.count("ProcessQueueInfo [commitOffset=") == 3  # TopicRun's two queues and %RETRY%CG_run's
        assert "Same subscription in the same group of consumer" in out

        rc, one, _ = await mqadmin("consumerStatus", "-n", cluster.ns_addr, "-g", "CG_run", "-i", cid, "-s")
        assert rc == 0 and one.startswith("#Consumer Properties#\n") and "001" not in one.split("\n")[0]
        assert "Topic: TopicRun" in one and "#Consumer Offset#" in one

        rc, _out, err = await mqadmin("consumerStatus", "-n", cluster.ns_addr, "-g", "CG_run", "-i", "10.0.0.9@x")
        assert rc == 1
        one_error_line(err, "mqadmin consumerStatus:", "CODE: 206", "<CG_run> <10.0.0.9@x> not online")

    rc, out, err = await mqadmin("consumerStatus", "-n", cluster.ns_addr, "-g", "CG_nobody")
    assert rc == 1 and out == ""
    one_error_line(err, "CODE: 206", "the consumer group[CG_nobody] not online")
    rc, _out, err = await mqadmin("consumerStatus", "-n", cluster.ns_addr)
    assert rc == 2 and "-g/--consumerGroup" in err


@asynccontextmanager
async def second_broker(cluster: Cluster, tmp_path: Path) -> AsyncIterator[BrokerApp]:
    async with run_broker(
        cluster.ns, tmp_path / "b2", brokerName="broker-b", brokerClusterName="ClusterB", messageDelayLevel="1s"
    ) as b:
        yield b


async def test_get_consumer_status_merges_every_broker(cluster: Cluster, tmp_path: Path) -> None:
    async with second_broker(cluster, tmp_path) as b2:
        await cluster.create_topic("TopicSt", 2)
        await cluster.create_topic("TopicSt", 2, broker=b2)
        seen: list[bytes] = []

        async def listener(msgs: list[MessageExt]) -> ConsumeResult:
            seen.extend(m.body for m in msgs)
            return ConsumeResult.SUCCESS

        c = PushConsumer("CG_st", namesrv_addr=cluster.ns_addr)
        c.subscribe("TopicSt", "*", listener)
        async with c:
            await until(lambda: sum(q.topic == "TopicSt" for q in c.assignment) == 4, what="the four queues")
            counts = per_queue(await send(cluster.ns_addr, "TopicSt", 8))
            await until(lambda: all(c.offset_store.read_memory(mq) == n for mq, n in counts.items()), what="offsets")
            cid = c.instance.client_id

            rc, out, err = await mqadmin("getConsumerStatus", "-n", cluster.ns_addr, "-g", "CG_st", "-t", "TopicSt")
            assert rc == 0, err
            assert out.splitlines()[0] == "get consumer status from client. group=CG_st, topic=TopicSt, originClientId="
            assert out.splitlines()[1].split() == ["#clientId", "#brokerName", "#queueId", "#offset"]
            got = {(r[1], int(r[2])): int(r[3]) for r in rows(out, cid)}
            assert {k: v for k, v in got.items() if v > 0} == {
                (mq.broker_name, mq.queue_id): n for mq, n in counts.items()
            }
            assert {b for b, _q in got} == {"broker-a", "broker-b"}
            # -i another client id: nobody answers, so no rows
            rc, out, _ = await mqadmin(
                "getConsumerStatus", "-n", cluster.ns_addr, "-g", "CG_st", "-t", "TopicSt", "-i", "10.0.0.9@x"
            )
            assert rc == 0 and rows(out, cid) == [] and "originClientId=10.0.0.9@x" in out

        rc, out, err = await mqadmin("getConsumerStatus", "-n", cluster.ns_addr, "-g", "CG_st", "-t", "TopicSt")
        assert rc == 1 and out == ""
        one_error_line(err, "mqadmin getConsumerStatus:", "CODE: 1", "No Any Consumer online in the consumer group")


# -- producerConnection, topicClusterList ----------------------------------------------------------------------------


async def test_producer_connection_and_topic_cluster_list_span_both_brokers(cluster: Cluster, tmp_path: Path) -> None:
    async with second_broker(cluster, tmp_path) as b2:
        await cluster.create_topic("TopicConn", 1)
        await cluster.create_topic("TopicConn", 1, broker=b2)
        async with Producer("PG_conn", namesrv_addr=cluster.ns_addr) as p:
            await p.send(Message("TopicConn", b"x"))
            await p.instance.send_heartbeat_to_all()
            await until(
                lambda: all("PG_conn" in b.clients.producer_groups() for b in (cluster.broker, b2)),
                what="PG_conn known to both brokers",
            )
            rc, out, err = await mqadmin(
                "producerConnection", "-n", cluster.ns_addr, "-g", "PG_conn", "-t", "TopicConn"
            )
            assert rc == 0, err
            assert out.splitlines()[0].split() == ["#ClientId", "#ClientAddr", "#Language", "#Version"]
            conns = rows(out, p.instance.client_id)
            assert len(conns) == 2 and {r[2] for r in conns} == {"PYTHON"}  # one connection per broker
            assert all(r[1].startswith("127.0.0.1:") for r in conns) and conns[0][1] != conns[1][1]

        rc, out, err = await mqadmin("topicClusterList", "-n", cluster.ns_addr, "-t", "TopicConn")
        assert rc == 0, err
        assert out.splitlines() == ["ClusterB", "DefaultCluster"]
        await cluster.create_topic("TopicOnlyA", 1)
        rc, out, _ = await mqadmin("topicClusterList", "-n", cluster.ns_addr, "-t", "TopicOnlyA")
        assert rc == 0 and out.splitlines() == ["DefaultCluster"]

    rc, out, err = await mqadmin("producerConnection", "-n", cluster.ns_addr, "-g", "PG_none", "-t", "TopicOnlyA")
    assert rc == 1 and out == ""
    one_error_line(err, "mqadmin producerConnection:", "CODE: 1", "the producer group[PG_none] not exist")
    rc, out, err = await mqadmin("topicClusterList", "-n", cluster.ns_addr, "-t", "NoSuchTopic")
    assert rc == 1 and out == ""
    one_error_line(err, "mqadmin topicClusterList:", "CODE: 17", "NoSuchTopic")
    rc, _out, err = await mqadmin("producerConnection", "-n", cluster.ns_addr, "-g", "PG_conn")
    assert rc == 2 and "-t/--topic" in err


# -- getNamesrvConfig, updateNamesrvConfig ---------------------------------------------------------------------------


async def test_namesrv_config_get_and_update(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns:
        rc, out, err = await mqadmin("getNamesrvConfig", "-n", ns.addr)
        assert rc == 0, err
        lines = out.splitlines()
        assert lines[0] == f"============{ns.addr}============"
        conf = {k.strip(): v.strip() for k, v in (ln.split("=  ", 1) for ln in lines[1:])}
        assert conf["listenAddress"] == "127.0.0.1" and conf["orderMessageEnable"] == "false"
        assert conf["kvConfigPath"] == str(tmp_path / "namesrv" / "kvConfig.json")
        assert lines[1].index("=  ") == 50  # J's %-50s=  %s

        rc, out, err = await mqadmin("updateNamesrvConfig", "-n", ns.addr, "-k", "orderMessageEnable", "-v", "true")
        assert rc == 0, err
        assert out.splitlines() == [f"update name server config success![{ns.addr}]", "orderMessageEnable : true"]
        assert ns.config.order_message_enable is True
        rc, out, _ = await mqadmin("getnamesrvconfig", "-n", ns.addr)
        assert rc == 0 and ["orderMessageEnable", "=", "true"] in [ln.split() for ln in out.splitlines()]


async def test_namesrv_config_refusals(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        before = ns.config
        rc, out, err = await mqadmin("updateNamesrvConfig", "-n", ns.addr, "-k", "kvConfigPath", "-v", "/tmp/evil")
        assert rc == 1 and out == ""
        one_error_line(err, "mqadmin updateNamesrvConfig:", "CODE: 16", "Can not update config path: kvConfigPath")
        rc, out, err = await mqadmin("updateNamesrvConfig", "-n", ns.addr, "-k", "listenPort", "-v", "1")
        assert rc == 1 and out == ""
        one_error_line(err, "CODE: 16", "config key listenPort can not be changed at runtime")
        rc, _out, err = await mqadmin(
            "updateNamesrvConfig", "-n", ns.addr, "-k", "scanNotActiveBrokerInterval", "-v", "soon"
        )
        assert rc == 1
        one_error_line(err, "CODE: 1", "scanNotActiveBrokerInterval=soon is not a valid integer")
        assert ns.config == before
        # a broker is not a name server: its reply code and remark
        rc, out, err = await mqadmin("getNamesrvConfig", "-n", broker.addr)
        assert rc == 1 and out == ""
        one_error_line(err, "mqadmin getNamesrvConfig:", "CODE: 3", "319")
        rc, _out, err = await mqadmin("updateNamesrvConfig", "-n", ns.addr, "-k", "orderMessageEnable")
        assert rc == 2 and "-v/--value" in err
        smuggled = "true\nkvConfigPath=/tmp/evil"
        rc, _out, err = await mqadmin("updateNamesrvConfig", "-n", ns.addr, "-k", "orderMessageEnable", "-v", smuggled)
        assert rc == 2 and "must not contain a line break" in err
        assert ns.config == before


def test_running_info_of_a_java_client(capsys: pytest.CaptureFixture[str]) -> None:
    """A Java consumer's GET_CONSUMER_RUNNING_INFO body (fastjson: MessageQueue object keys, statusTable per topic)
    reads and prints like ours (no Java client runs in this suite, so the body is written as fastjson writes it)."""
    body = (
        b'{"jstack":"main thread","mqTable":{{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"cachedMsgCount":2,'
        b'"commitOffset":41,"locked":false},{"brokerName":"broker-a","queueId":0,"topic":"T"}:{"cachedMsgCount":0,'
        b'"commitOffset":17,"locked":false}},"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY",'
        b'"PROP_CONSUMEORDERLY":"false"},"statusTable":{"T":{"consumeFailedMsgs":3,"consumeFailedTPS":0.0,'
        b'"consumeOKTPS":12.5,"consumeRT":1.25,"pullRT":2.0,"pullTPS":13.0}},"subscriptionSet":[{"classFilterMode":false,'
        b'"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1,"tagsSet":[],"topic":"T"}]}'
    )
    info = RunningInfo.decode(body)
    assert list(info.mq_table) == [MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 1)]
    print_running_info(info)
    out = capsys.readouterr().out
    offsets = out.split("#Consumer Offset#")[1].split("#Consumer MQ Detail#")[0]
    assert [r[:4] for r in rows(offsets, "T")] == [["T", "broker-a", "0", "17"], ["T", "broker-a", "1", "41"]]
    assert "ProcessQueueInfo [commitOffset=41, cachedMsgCount=2, locked=false]" in out  # J toString order
    rt = out.split("#Consumer RT&TPS#")[1].split("#Consumer jstack#")[0]
    assert rows(rt, "T") == [["T", "2.00", "13.00", "1.25", "12.50", "0.00", "3"]]
    assert out.rstrip().endswith("#Consumer jstack#\nmain thread")
