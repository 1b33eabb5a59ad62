"""The broker over raw frames: queue locks, VIEW_MESSAGE_BY_ID / QUERY_MESSAGE / view-by-queue-offset (PULL),
topic and group administration, consume stats with lag, runtime info, and the UPDATE_BROKER_CONFIG allow-list
(CVE-2023-33246).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from broker.services.rebalance_locks import RebalanceLockManager
from client.admin.admin_client import parse_mq_table
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.record_decode import decode_records
from protocol.remoting import RemotingClient
from tests.harness import run_broker
from tests.integration.broker_wire import heartbeat_cmd, messages, pull, send, simple_cmd


def lock_cmd(code: int, group: str, cid: str, qids: list[int]) -> RemotingCommand:
    body = {
        "consumerGroup": group,
        "clientId": cid,
        "mqSet": [{"topic": "T", "brokerName": "broker-a", "queueId": q} for q in qids],
    }
    return RemotingCommand.request(code, {}, json.dumps(body).encode())


async def test_locks_are_exclusive(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path) as broker:
        r = await client.invoke(broker.addr, lock_cmd(RequestCode.LOCK_BATCH_MQ, "G", "c1", [0, 1]), 3.0)
        assert {m["queueId"] for m in json.loads(r.body)["lockOKMQSet"]} == {0, 1}
        r = await client.invoke(broker.addr, lock_cmd(RequestCode.LOCK_BATCH_MQ, "G", "c2", [1, 2]), 3.0)
        assert [m["queueId"] for m in json.loads(r.body)["lockOKMQSet"]] == [2]
        r = await client.invoke(broker.addr, lock_cmd(RequestCode.LOCK_BATCH_MQ, "G", "c1", [0, 1, 2]), 3.0)
        assert {m["queueId"] for m in json.loads(r.body)["lockOKMQSet"]} == {0, 1}
        r = await client.invoke(broker.addr, lock_cmd(RequestCode.UNLOCK_BATCH_MQ, "G", "c1", [1]), 3.0)
        assert r.code == ResponseCode.SUCCESS
        r = await client.invoke(broker.addr, lock_cmd(RequestCode.LOCK_BATCH_MQ, "G", "c2", [1]), 3.0)
        assert [m["queueId"] for m in json.loads(r.body)["lockOKMQSet"]] == [1]
        r = await client.invoke(broker.addr, RemotingCommand.request(RequestCode.LOCK_BATCH_MQ, {}, b"nope"), 3.0)
        assert r.code == ResponseCode.SYSTEM_ERROR


def test_lock_expiry_and_extension() -> None:
    now = [0.0]
    m = RebalanceLockManager(60_000, clock=lambda: now[0])
    mq = ("T", "b", 0)
    assert m.try_lock_batch("G", [mq], "c1") == [mq]
    now[0] = 50
    assert m.try_lock_batch("G", [mq], "c2") == []
    assert m.try_lock_batch("G", [mq], "c1") == [mq]  # extends to 110
    now[0] = 100
    assert m.try_lock_batch("G", [mq], "c2") == []
    now[0] = 111
    assert m.holder("G", mq) is None
    assert m.try_lock_batch("G", [mq], "c2") == [mq]


async def test_view_query_and_view_by_queue_offset(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path) as broker:
        ids = []
        for i in range(3):
            r = await send(
                client, broker.addr, "QT", f"b{i}".encode(), keys=f"key{i} common", props={"UNIQ_KEY": f"U{i:031d}"}
            )
            ids.append(r.ext_fields["msgId"])
        r = await client.invoke(
            broker.addr, simple_cmd(RequestCode.VIEW_MESSAGE_BY_ID, offset=int(ids[1][16:], 16)), 3.0
        )
        [m] = decode_records(r.body)
        assert m.body == b"b1" and m.offset_msg_id == ids[1]
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.VIEW_MESSAGE_BY_ID, offset=10**9), 3.0)
        assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "can not find message by the offset")
        now = int(time.time() * 1000)
        q = dict(topic="QT", key="key2", maxNum=32, beginTimestamp=0, endTimestamp=now + 60_000)
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.QUERY_MESSAGE, **q), 3.0)
        assert r.code == ResponseCode.SUCCESS and [m.body for m in decode_records(r.body)] == [b"b2"]
        assert int(r.ext_fields["indexLastUpdatePhyoffset"]) >= 0 and "indexLastUpdateTimestamp" in r.ext_fields
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.QUERY_MESSAGE, **{**q, "key": "common"}), 3.0)
        assert sorted(m.body for m in decode_records(r.body)) == [b"b0", b"b1", b"b2"]
        uq = {**q, "key": f"U{0:031d}", "_UNIQUE_KEY_QUERY": "true"}
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.QUERY_MESSAGE, **uq), 3.0)
        assert [m.body for m in decode_records(r.body)] == [b"b0"]
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.QUERY_MESSAGE, **{**q, "key": "absent"}), 3.0)
        assert (r.code, r.remark) == (
            ResponseCode.QUERY_NOT_FOUND,
            "can not find message, maybe time range not correct",
        )
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.QUERY_MESSAGE, **{**q, "endTimestamp": 1}), 3.0)
        assert r.code == ResponseCode.QUERY_NOT_FOUND
        # view by queue offset = PULL one message at that offset (what mqadmin queryMsgByOffset does)
        r = await pull(client, broker.addr, "TOOLS_CONSUMER", "QT", 0, 1, suspend_ms=0, max_msgs=1)
        assert [m.body for m in messages(r)] == [b"b1"]


async def test_topic_group_admin_and_consume_stats(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path, brokerClusterName="C1") as broker:
        mk = dict(
            defaultTopic="TBW102",
            readQueueNums=2,
            writeQueueNums=2,
            perm=6,
            topicFilterType="SINGLE_TAG",
            order="false",
        )
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.UPDATE_AND_CREATE_TOPIC, topic="Adm", **mk), 3.0)
        assert r.code == ResponseCode.SUCCESS, r.remark
        for bad, remark in (("C1", "reserved"), ("a b", "illegal"), ("SCHEDULE_TOPIC_XXXX", "system topic")):
            r = await client.invoke(broker.addr, simple_cmd(RequestCode.UPDATE_AND_CREATE_TOPIC, topic=bad, **mk), 3.0)
            assert r.code == ResponseCode.SYSTEM_ERROR and remark in (r.remark or ""), (bad, r.remark)
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.GET_ALL_TOPIC_CONFIG), 3.0)
        doc = json.loads(r.body)
        assert doc["topicConfigTable"]["Adm"]["writeQueueNums"] == 2 and "counter" in doc["dataVersion"]
        for i in range(5):
            await send(client, broker.addr, "Adm", b"x", queue_id=i % 2)
        # consumer committed 1 on q0 and nothing on q1 → lag 2 + 2 ... q0: 3 msgs, q1: 2 msgs
        r = await client.invoke(
            broker.addr,
            simple_cmd(RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup="GA", topic="Adm", queueId=0, commitOffset=1),
            3.0,
        )
        assert r.code == ResponseCode.SUCCESS
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.GET_CONSUME_STATS, consumerGroup="GA"), 3.0)
        assert r.code == ResponseCode.SUCCESS, r.remark
        stats = {mq.queue_id: v for mq, v in parse_mq_table(r.body).items() if mq.topic == "Adm"}
        assert {q: v["brokerOffset"] - v["consumerOffset"] for q, v in stats.items()} == {0: 2, 1: 2}
        assert stats[0]["lastTimestamp"] > 0
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.GET_TOPIC_STATS_INFO, topic="Adm"), 3.0)
        ts = {mq.queue_id: v for mq, v in parse_mq_table(r.body).items()}
        assert ts[0]["maxOffset"] == 3 and ts[1]["maxOffset"] == 2 and ts[0]["minOffset"] == 0
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.GET_TOPIC_STATS_INFO, topic="Nope"), 3.0)
        assert r.code == ResponseCode.TOPIC_NOT_EXIST
        # groups
        body = json.dumps({"groupName": "GA", "retryMaxTimes": 3}).encode()
        r = await client.invoke(
            broker.addr, RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, body), 3.0
        )
        assert r.code == ResponseCode.SUCCESS
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG), 3.0)
        assert json.loads(r.body)["subscriptionGroupTable"]["GA"]["retryMaxTimes"] == 3
        r = await client.invoke(
            broker.addr, RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, b"{"), 3.0
        )
        assert r.code == ResponseCode.SYSTEM_ERROR
        r = await client.invoke(
            broker.addr, simple_cmd(RequestCode.DELETE_SUBSCRIPTIONGROUP, groupName="GA", removeOffset="true"), 3.0
        )
        assert r.code == ResponseCode.SUCCESS and broker.groups.get("GA") is None
        assert broker.offsets.query("GA", "Adm", 0) == -1
        # consumer connections
        r = await client.invoke(
            broker.addr, simple_cmd(RequestCode.GET_CONSUMER_CONNECTION_LIST, consumerGroup="GB"), 3.0
        )
        assert r.code == ResponseCode.CONSUMER_NOT_ONLINE
        await client.invoke(broker.addr, heartbeat_cmd("cid-1", "GB", "Adm"), 3.0)
        r = await client.invoke(
            broker.addr, simple_cmd(RequestCode.GET_CONSUMER_CONNECTION_LIST, consumerGroup="GB"), 3.0
        )
        conn = json.loads(r.body)
        assert conn["connectionSet"][0]["clientId"] == "cid-1" and "Adm" in conn["subscriptionTable"]
        assert conn["messageModel"] == "CLUSTERING"
        # delete the topic: config, queues and offsets go
        await client.invoke(
            broker.addr,
            simple_cmd(RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup="GB", topic="Adm", queueId=0, commitOffset=2),
            3.0,
        )
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic="Adm"), 3.0)
        assert r.code == ResponseCode.SUCCESS
        assert broker.topics.get("Adm") is None and broker.store.get_max_offset_in_queue("Adm", 0) == 0
        assert broker.offsets.query("GB", "Adm", 0) == -1
        r = await client.invoke(broker.addr, simple_cmd(RequestCode.GET_BROKER_RUNTIME_INFO), 3.0)
        table = json.loads(r.body)["table"]
        assert (
            table["msgPutTotalTodayNow"] == "5" and len(table["putTps"].split()) == 3 and "commitLogDiskRatio" in table
        )


async def test_update_broker_config_allow_list(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path) as broker:

        async def get_config() -> bytes:
            r = await client.invoke(broker.addr, simple_cmd(RequestCode.GET_BROKER_CONFIG), 3.0)
            assert r.code == ResponseCode.SUCCESS
            return r.body

        async def update(text: str) -> RemotingCommand:
            return await client.invoke(
                broker.addr, RemotingCommand.request(RequestCode.UPDATE_BROKER_CONFIG, {}, text.encode()), 3.0
            )

        before = await get_config()
        for text, key in (
            ("storePathRootDir=/tmp/evil\n", "storePathRootDir"),
            ("rocketmqHome=-c $@|sh . echo pwned\nfilterServerNums=1\n", "rocketmqHome"),
            ("filterServerNums=1\n", "filterServerNums"),
            ("brokerConfigPath=/etc/cron.d/x\n", "brokerConfigPath"),
            ("noSuchKey=1\n", "noSuchKey"),
            ("listenPort=1\n", "listenPort"),
            ("namesrvAddr=1.2.3.4:9876\n", "namesrvAddr"),
            ("autoCreateTopicEnable=false\nstorePathCommitLog=/tmp/x\n", "storePathCommitLog"),
        ):
            r = await update(text)
            assert r.code == ResponseCode.NO_PERMISSION and key in (r.remark or ""), (text, r.remark)
        r = await update("fileReservedTime=notanumber\n")
        assert r.code == ResponseCode.SYSTEM_ERROR and "fileReservedTime" in (r.remark or "")
        assert await get_config() == before
        assert broker.config.features.auto_create_topic_enable is True
        r = await update("autoCreateTopicEnable=false\nfileReservedTime=48\n")
        assert r.code == ResponseCode.SUCCESS, r.remark
        after = (await get_config()).decode()
        assert "autoCreateTopicEnable=false" in after and "fileReservedTime=48" in after
        assert broker.store.config.file_reserved_time_hours == 48
        r = await send(client, broker.addr, "NewAfterOff", b"x")
        assert r.code == ResponseCode.TOPIC_NOT_EXIST
