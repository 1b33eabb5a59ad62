"""SQL92 property filters over remoting: our SDK's push and pull consumers subscribing with
``MessageSelector.by_sql`` get exactly the matching messages, and the broker answers as J does when the property
filter is off, when the expression does not compile (CHECK_CLIENT_CONFIG, heartbeat, pull header), and for TAGS."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from client import ConsumeResult, Message, MessageQueue, MessageSelector, Producer, PullConsumer, PushConsumer
from client.errors import MQClientError
from client.results import PullStatus
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.message_ext import MessageExt
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import pull, pull_cmd
from tests.integration.client_support import Cluster

TOPIC = "TopicSql"


@pytest.fixture
async def sql_cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, enablePropertyFilter=True) as broker:
        yield Cluster(ns, broker, tmp_path)


async def _produce(ns_addr: str, n: int = 20) -> None:
    async with Producer("PG_sql", namesrv_addr=ns_addr) as p:
        for i in range(n):
            tags = "TagA" if i % 2 == 0 else "TagB"
            await p.send(Message(TOPIC, f"k{i}".encode(), tags=tags, keys=[f"k{i}"], properties={"a": str(i)}))


async def test_push_consumer_by_sql_gets_exactly_the_matching_messages(sql_cluster: Cluster) -> None:
    await sql_cluster.create_topic(TOPIC, 2)
    seen: list[bytes] = []

    def listener(msgs: list[MessageExt]) -> ConsumeResult:
        seen.extend(m.body for m in msgs)
        return ConsumeResult.SUCCESS

    c = PushConsumer("CG_sql_push", namesrv_addr=sql_cluster.ns_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    c.subscribe(TOPIC, MessageSelector.by_sql("a between 10 and 14"), listener)
    async with c:
        await _produce(sql_cluster.ns_addr)
        await eventually(lambda: len(seen) >= 5, timeout=15, what="the five matching messages")
        # the rest of the topic has been pulled past (filtered out), so nothing else can arrive
        await eventually(
            lambda: sum(sql_cluster.broker.offsets.query("CG_sql_push", TOPIC, q) for q in range(2)) == 20,
            timeout=15,
            what="the consumer's offsets past every message",
        )
    assert sorted(seen) == [b"k10", b"k11", b"k12", b"k13", b"k14"]


async def test_pull_consumer_by_sql_with_tags_pseudo_property(sql_cluster: Cluster) -> None:
    await sql_cluster.create_topic(TOPIC, 1)
    await _produce(sql_cluster.ns_addr)
    async with PullConsumer("CG_sql_pull", namesrv_addr=sql_cluster.ns_addr) as c:
        mq = MessageQueue(TOPIC, sql_cluster.broker.config.identity.broker_name, 0)
        res = await c.pull(mq, 0, 32, MessageSelector.by_sql("TAGS = 'TagA' AND a >= 15"))
        assert res.status is PullStatus.FOUND
        assert [m.body for m in res.msg_found_list] == [b"k16", b"k18"]
        assert res.next_begin_offset == 20
        none = await c.pull(mq, 0, 32, MessageSelector.by_sql("a IN ('99') OR b IS NOT NULL"))
        assert none.status is PullStatus.NO_MATCHED_MSG and none.next_begin_offset == 20


def _check_cmd(sql: str, kind: str = "SQL92") -> RemotingCommand:
    body = {
        "clientId": "127.0.0.1@test",
        "group": "CG_check",
        "subscriptionData": {"topic": TOPIC, "subString": sql, "expressionType": kind, "subVersion": 1},
    }
    return RemotingCommand.request(RequestCode.CHECK_CLIENT_CONFIG, {}, json.dumps(body).encode())


async def test_check_client_config_compiles_the_expression(sql_cluster: Cluster, client: RemotingClient) -> None:
    addr = sql_cluster.broker.addr
    ok = await client.invoke(addr, _check_cmd("a > 5 AND b = 'x'"), 5.0)
    assert ok.code == ResponseCode.SUCCESS
    bad = await client.invoke(addr, _check_cmd("a > 'abc'"), 5.0)
    assert bad.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED
    assert bad.remark == "java.lang.RuntimeException: Value ''abc'' cannot be compared."
    syntax = await client.invoke(addr, _check_cmd("a LIKE 'x%'"), 5.0)
    assert syntax.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED
    assert syntax.remark is not None and syntax.remark.startswith("org.apache.rocketmq.filter.parser.ParseException")
    tag = await client.invoke(addr, _check_cmd("a LIKE 'x%'", "TAG"), 5.0)
    assert tag.code == ResponseCode.SUCCESS


async def test_property_filter_off_refuses_sql(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        check = await client.invoke(broker.addr, _check_cmd("a > 5"), 5.0)
        assert check.code == ResponseCode.SYSTEM_ERROR
        assert check.remark == "The broker does not support consumer to filter message by SQL92"
        cmd = pull_cmd("CG_off", "TBW102", 0, 0, sub="a > 5", suspend_ms=0)
        cmd.ext_fields["expressionType"] = "SQL92"
        resp = await client.invoke(broker.addr, cmd, 5.0)
        assert resp.code == ResponseCode.SYSTEM_ERROR
        assert resp.remark == "The broker does not support consumer to filter message by SQL92"


async def test_bad_sql_in_pull_header_and_heartbeat(sql_cluster: Cluster, client: RemotingClient) -> None:
    await sql_cluster.create_topic(TOPIC, 1)
    addr = sql_cluster.broker.addr
    cmd = pull_cmd("CG_bad", TOPIC, 0, 0, sub="a >", suspend_ms=0)
    cmd.ext_fields["expressionType"] = "SQL92"
    resp = await client.invoke(addr, cmd, 5.0)
    assert resp.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED
    heartbeat = {
        "clientID": "127.0.0.1@bad",
        "consumerDataSet": [
            {
                "groupName": "CG_bad",
                "consumeType": "CONSUME_PASSIVELY",
                "messageModel": "CLUSTERING",
                "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                "subscriptionDataSet": [
                    {"topic": TOPIC, "subString": "a >", "expressionType": "SQL92", "subVersion": 1},
                ],
            }
        ],
    }
    hb = RemotingCommand.request(RequestCode.HEART_BEAT, {}, json.dumps(heartbeat).encode())
    assert (await client.invoke(addr, hb, 5.0)).code == ResponseCode.SUCCESS
    # without the SUBSCRIPTION flag the broker uses the heartbeat's expression, which did not compile
    resp = await pull(client, addr, "CG_bad", TOPIC, 0, 0, sys_flag=0, suspend_ms=0)
    assert resp.code == ResponseCode.FILTER_DATA_NOT_EXIST
    assert resp.remark == "The broker's consumer filter data is not exist!Your expression may be wrong!"


async def test_push_consumer_start_fails_on_an_expression_the_broker_refuses(sql_cluster: Cluster) -> None:
    """As J's ``checkClientInBroker``: the broker compiles the expression before the consumer starts."""
    await sql_cluster.create_topic(TOPIC, 1)
    c = PushConsumer("CG_sql_bad_start", namesrv_addr=sql_cluster.ns_addr)
    c.subscribe(TOPIC, MessageSelector.by_sql("a > 'abc'"), lambda msgs: ConsumeResult.SUCCESS)
    with pytest.raises(MQClientError) as info:
        await c.start()
    assert "Value ''abc'' cannot be compared." in str(info.value)
