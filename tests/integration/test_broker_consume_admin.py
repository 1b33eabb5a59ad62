"""The remaining J 4.x ``AdminBrokerProcessor`` codes that mqadmin and the Dashboard send, over raw frames against a
real broker: QUERY_TOPIC_CONSUME_BY_WHO (300), GET_ALL_CONSUMER_OFFSET (43), GET_ALL_DELAY_OFFSET (45),
GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305), QUERY_CONSUME_QUEUE (321), CLONE_GROUP_OFFSET (314),
GET_BROKER_CONSUME_STATS (317), QUERY_CONSUME_TIME_SPAN (303) and CONSUME_MESSAGE_DIRECTLY (309), relayed to a
consumer connection that answers broker → client requests. Plus the typed headers and bodies they use.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from protocol import headers as H
from protocol.bodies import (
    ConsumeMessageDirectlyResult,
    ConsumeQueueData,
    ConsumeStats,
    ConsumeStatsList,
    GroupList,
    MessageQueue,
    OffsetWrapper,
    QueryConsumeQueueResponseBody,
    QueryConsumeTimeSpanBody,
    QueueTimeSpan,
    SubscriptionData,
)
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import BadHeaderFieldError, MissingHeaderFieldError
from protocol.message_properties import java_string_hash, tag_hash
from protocol.msg_id import create_offset_msg_id, decode_offset_msg_id
from protocol.record_decode import decode_record
from protocol.remoting import HandlerRegistry, RemotingClient
from tests.harness import run_broker
from tests.integration.broker_wire import heartbeat_cmd, messages, pull, send, simple_cmd

BROKER = "broker-a"


async def _call(client: RemotingClient, addr: str, code: int, **ext: object) -> RemotingCommand:
    return await client.invoke(addr, simple_cmd(code, **ext), 5.0)


async def _commit(client: RemotingClient, addr: str, group: str, topic: str, qid: int, offset: int) -> None:
    r = await _call(
        client,
        addr,
        RequestCode.UPDATE_CONSUMER_OFFSET,
        consumerGroup=group,
        topic=topic,
        queueId=qid,
        commitOffset=offset,
    )
    assert r.code == ResponseCode.SUCCESS, r.remark


async def _create_topic(client: RemotingClient, addr: str, topic: str, queues: int, *, order: bool = False) -> None:
    r = await _call(
        client,
        addr,
        RequestCode.UPDATE_AND_CREATE_TOPIC,
        topic=topic,
        defaultTopic="TBW102",
        readQueueNums=queues,
        writeQueueNums=queues,
        perm=6,
        topicFilterType="SINGLE_TAG",
        order=str(order).lower(),
    )
    assert r.code == ResponseCode.SUCCESS, r.remark


async def _store_times(client: RemotingClient, addr: str, topic: str, qid: int) -> list[int]:
    r = await pull(client, addr, "TIMES_READER", topic, qid, 0, suspend_ms=0)
    return [m.store_timestamp for m in messages(r)]


# -- typed headers and bodies -----------------------------------------------------------------------------------------

HEADERS: list[tuple[Any, set[str]]] = [
    (H.QueryConsumeTimeSpanRequestHeader("T", "G"), {"topic", "group"}),
    (H.QueryConsumeQueueRequestHeader("T", 1, 2, 3, "G"), {"topic", "queueId", "index", "count"}),
    (H.CloneGroupOffsetRequestHeader("S", "D", "T", True), {"srcGroup", "destGroup"}),
    (H.GetConsumeStatsInBrokerHeader(True), {"isOrder"}),
    (H.ConsumeMessageDirectlyResultRequestHeader("G", "cid", "AB", "b"), {"consumerGroup"}),
]


@pytest.mark.parametrize(("header", "required"), HEADERS, ids=[type(h).__name__ for h, _ in HEADERS])
def test_new_headers_round_trip_and_name_missing_fields(header: Any, required: set[str]) -> None:
    wire = header.to_ext_fields()
    assert all(isinstance(v, str) for v in wire.values())
    assert type(header).from_ext_fields(wire) == header
    for key in wire:
        partial = {k: v for k, v in wire.items() if k != key}
        if key in required:
            with pytest.raises(MissingHeaderFieldError, match=f"^the custom field <{key}> is null$"):
                type(header).from_ext_fields(partial)
        else:
            type(header).from_ext_fields(partial)
    for key, value in wire.items():
        if value.lstrip("-").isdigit() or value in ("true", "false"):
            with pytest.raises(BadHeaderFieldError, match=f"<{key}> is not a valid .*'abc'"):
                type(header).from_ext_fields({**wire, key: "abc"})


def test_new_header_wire_names() -> None:
    assert H.GetConsumeStatsInBrokerHeader(False).to_ext_fields() == {"isOrder": "false"}
    assert H.CloneGroupOffsetRequestHeader.from_ext_fields({"srcGroup": "S", "destGroup": "D", "topic": ""}) == (
        H.CloneGroupOffsetRequestHeader("S", "D", None, False)
    )
    assert H.QueryTopicConsumeByWhoRequestHeader is H.TopicRequestHeader
    assert H.ConsumeMessageDirectlyResultRequestHeader.from_ext_fields({"consumerGroup": "G"}).msg_id is None


def test_new_bodies_round_trip() -> None:
    mq = MessageQueue("T", BROKER, 1)
    stats = ConsumeStats({mq: OffsetWrapper(9, 4, 123)}, 0.0)
    lst = ConsumeStatsList("1.2.3.4:10911", [{"G": [stats]}, {"E": []}], 5)
    assert ConsumeStatsList.decode(lst.encode()) == lst
    assert lst.encode().startswith(b'{"brokerAddr":"1.2.3.4:10911","consumeStatsList":[{"G":[{"consumeTps":0.0,')
    assert lst.encode().endswith(b'{"E":[]}],"totalDiff":5}')
    assert GroupList.decode(b'{"groupList":["a","b"]}').group_list == ["a", "b"]
    span = QueryConsumeTimeSpanBody(
        consume_time_span_set=[
            QueueTimeSpan(consume_time_stamp=1, delay_time=2, max_time_stamp=3, message_queue=mq, min_time_stamp=4)
        ]
    )
    assert span.encode() == (
        b'{"consumeTimeSpanSet":[{"consumeTimeStamp":1,"delayTime":2,"maxTimeStamp":3,'
        b'"messageQueue":{"brokerName":"broker-a","queueId":1,"topic":"T"},"minTimeStamp":4}]}'
    )
    assert QueryConsumeTimeSpanBody.decode(span.encode()) == span
    cq = QueryConsumeQueueResponseBody(
        max_queue_index=2, queue_data=[ConsumeQueueData(physic_offset=7, physic_size=100, tags_code=65)]
    )
    assert QueryConsumeQueueResponseBody.decode(cq.encode()) == cq
    result = ConsumeMessageDirectlyResult.decode(b'{"consumeResult":0,"spentTimeMills":"5"}')
    assert (result.consume_result, result.spent_time_mills, result.auto_commit) == ("CR_SUCCESS", 5, True)


# -- offsets, groups, clone ---------------------------------------------------------------------------------------------


async def test_topic_consume_by_who_and_all_consumer_offsets(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path) as broker:
        r = await _call(client, broker.addr, RequestCode.GET_ALL_CONSUMER_OFFSET)
        assert (r.code, r.body) == (ResponseCode.SUCCESS, b'{"offsetTable":{}}')
        await _commit(client, broker.addr, "G1", "T1", 0, 5)
        await _commit(client, broker.addr, "G1", "T1", 1, 7)
        await _commit(client, broker.addr, "G2", "T2", 0, 1)
        r = await _call(client, broker.addr, RequestCode.GET_ALL_CONSUMER_OFFSET)
        assert r.code == ResponseCode.SUCCESS
        assert r.body == b'{"offsetTable":{"T1@G1":{"0":5,"1":7},"T2@G2":{"0":1}}}'
        # an online consumer of T1 that has committed nothing, plus the groups with offsets on T1
        r = await client.invoke(broker.addr, heartbeat_cmd("cid-h", "GH", "T1"), 3.0)
        assert r.code == ResponseCode.SUCCESS
        r = await _call(client, broker.addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, topic="T1")
        assert (r.code, r.body) == (ResponseCode.SUCCESS, b'{"groupList":["G1","GH"]}')
        r = await _call(client, broker.addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, topic="T2")
        assert r.body == b'{"groupList":["G2"]}'
        r = await _call(client, broker.addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, topic="Nobody")
        assert (r.code, r.body) == (ResponseCode.SUCCESS, b'{"groupList":[]}')


async def test_all_delay_offsets(tmp_path: Path, client: RemotingClient) -> None:
    levels = dict(messageDelayLevel="1h 2h")  # nothing comes due while the test runs
    async with run_broker(None, tmp_path, **levels) as broker:
        r = await _call(client, broker.addr, RequestCode.GET_ALL_DELAY_OFFSET)
        assert (r.code, r.body) == (ResponseCode.SUCCESS, b'{"offsetTable":{}}')
        for i in range(2):
            r = await send(client, broker.addr, "Later", f"d{i}".encode(), props={"DELAY": "1"})
            assert r.code == ResponseCode.SUCCESS
        assert broker.store.get_max_offset_in_queue("SCHEDULE_TOPIC_XXXX", 0) == 2
    # delayOffset.json as J's fastjson writes it (unquoted level keys): level 1 has delivered both, level 2 nothing
    (tmp_path / "broker" / "config" / "delayOffset.json").write_text('{\n\t"offsetTable":{2:0,1:2\n\t}\n}')
    async with run_broker(None, tmp_path, **levels) as broker:
        r = await _call(client, broker.addr, RequestCode.GET_ALL_DELAY_OFFSET)
        assert (r.code, r.body) == (ResponseCode.SUCCESS, b'{"offsetTable":{"1":2,"2":0}}')


async def test_clone_group_offset(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path) as broker:
        for topic in ("T1", "T2"):
            await _create_topic(client, broker.addr, topic, 4)
        await _commit(client, broker.addr, "SRC", "T1", 0, 3)
        await _commit(client, broker.addr, "SRC", "T1", 1, 4)
        await _commit(client, broker.addr, "SRC", "T2", 0, 1)
        await _commit(client, broker.addr, "SRC", "Gone", 0, 8)  # offsets on a topic not configured here
        await _commit(client, broker.addr, "DST", "T1", 2, 9)
        offsets = broker.offsets

        r = await _call(
            client, broker.addr, RequestCode.CLONE_GROUP_OFFSET, srcGroup="SRC", destGroup="DST", topic="T1"
        )
        assert r.code == ResponseCode.SUCCESS, r.remark
        assert offsets.query_all("DST", "T1") == {0: 3, 1: 4}  # replaced, as J's cloneOffset does
        assert offsets.query_all("DST", "T2") == {}
        # empty topic: every configured topic SRC has offsets on
        r = await _call(client, broker.addr, RequestCode.CLONE_GROUP_OFFSET, srcGroup="SRC", destGroup="ALL", topic="")
        assert r.code == ResponseCode.SUCCESS
        assert offsets.topics_of_group("ALL") == {"T1", "T2"}
        assert offsets.query_all("ALL", "T2") == {0: 1}
        # SRC online and subscribed to T1 only: T2 is skipped unless offline=true
        r = await client.invoke(broker.addr, heartbeat_cmd("cid-src", "SRC", "T1"), 3.0)
        assert r.code == ResponseCode.SUCCESS
        clone = dict(srcGroup="SRC", destGroup="D2", topic="T2")
        r = await _call(client, broker.addr, RequestCode.CLONE_GROUP_OFFSET, **clone, offline="false")
        assert r.code == ResponseCode.SUCCESS and offsets.query_all("D2", "T2") == {}
        r = await _call(client, broker.addr, RequestCode.CLONE_GROUP_OFFSET, **clone, offline="true")
        assert r.code == ResponseCode.SUCCESS and offsets.query_all("D2", "T2") == {0: 1}
        r = await _call(client, broker.addr, RequestCode.GET_ALL_CONSUMER_OFFSET)
        assert b'"T2@D2":{"0":1}' in r.body
        # bad input
        r = await _call(client, broker.addr, RequestCode.CLONE_GROUP_OFFSET, destGroup="X", topic="T1")
        assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "the custom field <srcGroup> is null")
        r = await _call(client, broker.addr, RequestCode.CLONE_GROUP_OFFSET, srcGroup="S", destGroup="X", offline="y")
        assert r.code == ResponseCode.SYSTEM_ERROR and "<offline> is not a valid boolean" in (r.remark or "")
        assert offsets.topics_of_group("X") == set()


# -- stats ------------------------------------------------------------------------------------------------------------


async def test_broker_consume_stats(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path) as broker:
        await _create_topic(client, broker.addr, "Ord", 2, order=True)
        await _create_topic(client, broker.addr, "Plain", 2)
        body = json.dumps({"groupName": "GS"}).encode()
        r = await client.invoke(
            broker.addr, RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, body), 3.0
        )
        assert r.code == ResponseCode.SUCCESS
        for _ in range(3):
            await send(client, broker.addr, "Ord", b"o", queue_id=0)
        for _ in range(2):
            await send(client, broker.addr, "Plain", b"p", queue_id=1)
        await _commit(client, broker.addr, "GS", "Ord", 0, 1)
        await _commit(client, broker.addr, "GS", "Plain", 1, 2)
        ord_times = await _store_times(client, broker.addr, "Ord", 0)
        plain_times = await _store_times(client, broker.addr, "Plain", 1)

        r = await _call(client, broker.addr, RequestCode.GET_BROKER_CONSUME_STATS, isOrder="false")
        assert r.code == ResponseCode.SUCCESS, r.remark
        assert r.body.startswith(b'{"brokerAddr":"' + broker.addr.encode() + b'","consumeStatsList":[')
        got = ConsumeStatsList.decode(r.body)
        assert got.broker_addr == broker.addr and got.total_diff == 2
        by_group = {g: v for m in got.consume_stats_list for g, v in m.items()}
        assert set(by_group) == {cfg.group_name for cfg in broker.groups.all()}
        assert by_group["TOOLS_CONSUMER"] == []
        ord_stats, plain_stats = by_group["GS"]
        assert ord_stats.offset_table == {
            MessageQueue("Ord", BROKER, 0): OffsetWrapper(3, 1, ord_times[0]),
            MessageQueue("Ord", BROKER, 1): OffsetWrapper(0, 0, 0),
        }
        assert plain_stats.offset_table == {
            MessageQueue("Plain", BROKER, 0): OffsetWrapper(0, 0, 0),
            MessageQueue("Plain", BROKER, 1): OffsetWrapper(2, 2, plain_times[1]),
        }
        r = await _call(client, broker.addr, RequestCode.GET_BROKER_CONSUME_STATS, isOrder="true")
        got = ConsumeStatsList.decode(r.body)
        by_group = {g: v for m in got.consume_stats_list for g, v in m.items()}
        [only] = by_group["GS"]
        assert {mq.topic for mq in only.offset_table} == {"Ord"} and got.total_diff == 2
        # GET_CONSUME_STATS shares the builder (read queues, same figures)
        r = await _call(client, broker.addr, RequestCode.GET_CONSUME_STATS, consumerGroup="GS", topic="Ord")
        assert ConsumeStats.decode(r.body).offset_table == ord_stats.offset_table
        # bad input
        r = await _call(client, broker.addr, RequestCode.GET_BROKER_CONSUME_STATS)
        assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "the custom field <isOrder> is null")
        r = await _call(client, broker.addr, RequestCode.GET_BROKER_CONSUME_STATS, isOrder="maybe")
        assert r.code == ResponseCode.SYSTEM_ERROR and "<isOrder> is not a valid boolean: 'maybe'" in (r.remark or "")


async def test_query_consume_time_span(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path) as broker:
        await _create_topic(client, broker.addr, "TS", 2)
        for i in range(3):
            await send(client, broker.addr, "TS", f"m{i}".encode(), queue_id=0)
        st = await _store_times(client, broker.addr, "TS", 0)
        await _commit(client, broker.addr, "G", "TS", 0, 1)
        await _commit(client, broker.addr, "DONE", "TS", 0, 3)

        before = int(time.time() * 1000)
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_TIME_SPAN, topic="TS", group="G")
        after = int(time.time() * 1000)
        assert r.code == ResponseCode.SUCCESS, r.remark
        q0, q1 = json.loads(r.body)["consumeTimeSpanSet"]
        assert list(q0) == ["consumeTimeStamp", "delayTime", "maxTimeStamp", "messageQueue", "minTimeStamp"]
        assert q0["messageQueue"] == {"brokerName": BROKER, "queueId": 0, "topic": "TS"}
        assert list(q0["messageQueue"]) == ["brokerName", "queueId", "topic"]
        assert (q0["minTimeStamp"], q0["maxTimeStamp"], q0["consumeTimeStamp"]) == (st[0], st[2], st[0])
        assert before - st[1] <= q0["delayTime"] <= after - st[1]  # now - store time of the next message (m1)
        # an empty queue with nothing committed: J reads offset -1 as store time -1, so delay = now + 1
        assert (q1["minTimeStamp"], q1["maxTimeStamp"], q1["consumeTimeStamp"]) == (-1, -1, -1)
        assert before + 1 <= q1["delayTime"] <= after + 1
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_TIME_SPAN, topic="TS", group="DONE")
        q0, _q1 = QueryConsumeTimeSpanBody.decode(r.body).consume_time_span_set
        assert (q0.consume_time_stamp, q0.delay_time) == (st[2], 0)
        # bad input
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_TIME_SPAN, topic="Nope", group="G")
        assert (r.code, r.remark) == (ResponseCode.TOPIC_NOT_EXIST, "topic[Nope] not exist")
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_TIME_SPAN, topic="TS")
        assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "the custom field <group> is null")


# -- queues and topics ------------------------------------------------------------------------------------------------


async def test_query_consume_queue(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path) as broker:
        units = []
        for body, tags in ((b"a", "A"), (b"b", "B"), (b"c", None)):
            r = await send(client, broker.addr, "CQ", body, tags=tags, queue_nums=1)
            assert r.code == ResponseCode.SUCCESS, r.remark
            phys = decode_offset_msg_id(r.ext_fields["msgId"])[2]
            view = await _call(client, broker.addr, RequestCode.VIEW_MESSAGE_BY_ID, offset=phys)
            units.append((phys, len(view.body), tag_hash(tags)))

        def unit_json(i: int) -> str:
            p, s, t = units[i]
            return (
                f'{{"bitMap":null,"eval":false,"extendDataJson":null,"msg":null,'
                f'"physicOffset":{p},"physicSize":{s},"tagsCode":{t}}}'
            )

        q = dict(topic="CQ", queueId=0)
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_QUEUE, **q, index=1, count=5, consumerGroup="GQ")
        assert (r.code, r.remark) == (ResponseCode.SUCCESS, None)
        assert (
            r.body
            == (
                '{"filterData":"GQ@CQ is not online!","maxQueueIndex":3,"minQueueIndex":0,'
                f'"queueData":[{unit_json(1)},{unit_json(2)}],"subscriptionData":null}}'
            ).encode()
        )
        assert units[1][2] == java_string_hash("B")
        # the group online: its heartbeat subscription, no filter data
        r = await client.invoke(broker.addr, heartbeat_cmd("cid-q", "GQ", "CQ", "A || B"), 3.0)
        assert r.code == ResponseCode.SUCCESS
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_QUEUE, **q, index=0, count=1, consumerGroup="GQ")
        sub = (
            '{"classFilterMode":false,"codeSet":[65,66],"expressionType":"TAG","subString":"A || B",'
            '"subVersion":1,"tagsSet":["A","B"],"topic":"CQ"}'
        )
        assert (
            r.body
            == (
                '{"filterData":null,"maxQueueIndex":3,"minQueueIndex":0,'
                f'"queueData":[{unit_json(0)}],"subscriptionData":{sub}}}'
            ).encode()
        )
        assert QueryConsumeQueueResponseBody.decode(r.body).subscription_data == SubscriptionData(
            topic="CQ", sub_string="A || B", tags_set=["A", "B"], code_set=[65, 66], sub_version=1
        )
        # no group: neither subscription nor filter data
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_QUEUE, **q, index=2, count=9)
        got = QueryConsumeQueueResponseBody.decode(r.body)
        assert (got.filter_data, got.subscription_data, len(got.queue_data)) == (None, None, 1)
        # an index outside the live range: SUCCESS with J's remark, no units
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_QUEUE, **q, index=3, count=1)
        assert (r.code, r.remark) == (ResponseCode.SUCCESS, "Index 3 of 0@CQ is not exist!")
        assert QueryConsumeQueueResponseBody.decode(r.body).queue_data == []
        # no such queue
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_QUEUE, topic="CQ", queueId=5, index=0, count=1)
        assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "5@CQ is not exist!")
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_QUEUE, topic="NoT", queueId=0, index=0, count=1)
        assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "0@NoT is not exist!")
        # bad input
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_QUEUE, **q, index=0)
        assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "the custom field <count> is null")
        r = await _call(client, broker.addr, RequestCode.QUERY_CONSUME_QUEUE, topic="CQ", queueId="x", index=0, count=1)
        assert r.code == ResponseCode.SYSTEM_ERROR and "<queueId> is not a valid number: 'x'" in (r.remark or "")


async def test_system_topic_list(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path, brokerClusterName="C9", brokerName="bk-x") as broker:
        r = await _call(client, broker.addr, RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER)
        assert r.code == ResponseCode.SUCCESS
        want = {
            "TBW102",
            "SCHEDULE_TOPIC_XXXX",
            "BenchmarkTest",
            "RMQ_SYS_TRANS_HALF_TOPIC",
            "RMQ_SYS_TRANS_OP_HALF_TOPIC",
            "TRANS_CHECK_MAX_TIME_TOPIC",
            "RMQ_SYS_TRACE_TOPIC",
            "OFFSET_MOVED_EVENT",
            "SELF_TEST_TOPIC",
            "C9",
            "bk-x",
            "C9_REPLY_TOPIC",
        }
        assert r.body == json.dumps({"topicList": sorted(want)}, separators=(",", ":")).encode()


async def test_bad_headers_get_clear_errors_and_the_broker_keeps_serving(
    tmp_path: Path, client: RemotingClient
) -> None:
    async with run_broker(None, tmp_path) as broker:
        for code, missing in (
            (RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, "topic"),
            (RequestCode.QUERY_CONSUME_TIME_SPAN, "topic"),
            (RequestCode.CLONE_GROUP_OFFSET, "srcGroup"),
            (RequestCode.GET_BROKER_CONSUME_STATS, "isOrder"),
            (RequestCode.QUERY_CONSUME_QUEUE, "topic"),
            (RequestCode.CONSUME_MESSAGE_DIRECTLY, "consumerGroup"),
        ):
            r = await _call(client, broker.addr, code)
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, f"the custom field <{missing}> is null"), code
        for code in (
            RequestCode.GET_ALL_CONSUMER_OFFSET,
            RequestCode.GET_ALL_DELAY_OFFSET,
            RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER,
        ):
            r = await _call(client, broker.addr, code)
            assert r.code == ResponseCode.SUCCESS and json.loads(r.body), code
        r = await send(client, broker.addr, "StillUp", b"x")
        assert r.code == ResponseCode.SUCCESS


# -- the consumer relay -----------------------------------------------------------------------------------------------


async def _consumer_conn(
    broker_addr: str, cid: str, group: str, topic: str, reply: RemotingCommand
) -> tuple[RemotingClient, list[RemotingCommand]]:
    """A consumer connection (heartbeated as ``cid`` of ``group``) that records what the broker sends it and
    answers 309 and 307 with ``reply``'s code, remark, ext fields and body."""
    got: list[RemotingCommand] = []
    reg = HandlerRegistry()

    async def answer(ctx, cmd):  # type: ignore[no-untyped-def]
        got.append(cmd)
        return cmd.make_response(reply.code, reply.remark, dict(reply.ext_fields), reply.body)

    reg.register(RequestCode.CONSUME_MESSAGE_DIRECTLY, answer)
    reg.register(RequestCode.GET_CONSUMER_RUNNING_INFO, answer)
    c = RemotingClient(reg)
    r = await c.invoke(broker_addr, heartbeat_cmd(cid, group, topic), 3.0)
    assert r.code == ResponseCode.SUCCESS
    return c, got


async def test_consume_message_directly_relays_to_the_client(tmp_path: Path, client: RemotingClient) -> None:
    result = b'{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,"remark":"ok","spentTimeMills":3}'
    ok = RemotingCommand(ResponseCode.SUCCESS, ext_fields={"k": "v"}, body=result)
    refused = RemotingCommand(ResponseCode.SYSTEM_ERROR, remark="The Consumer Group <GD> not exist in this consumer")
    async with run_broker(None, tmp_path) as broker:
        r = await send(client, broker.addr, "DT", b"direct", tags="TagD", queue_nums=1)
        msg_id = r.ext_fields["msgId"]
        phys = decode_offset_msg_id(msg_id)[2]
        stored = (await _call(client, broker.addr, RequestCode.VIEW_MESSAGE_BY_ID, offset=phys)).body
        good, got = await _consumer_conn(broker.addr, "cid-d", "GD", "DT", ok)
        bad, got_bad = await _consumer_conn(broker.addr, "cid-e", "GD", "DT", refused)
        try:
            direct = dict(consumerGroup="GD", clientId="cid-d", msgId=msg_id, brokerName="elsewhere")
            r = await _call(client, broker.addr, RequestCode.CONSUME_MESSAGE_DIRECTLY, **direct)
            assert (r.code, r.remark, r.body) == (ResponseCode.SUCCESS, None, result)
            assert r.ext_fields == {"k": "v"}
            [req] = got
            assert req.code == RequestCode.CONSUME_MESSAGE_DIRECTLY
            assert req.ext_fields == {**direct, "brokerName": BROKER}
            assert req.body == stored
            msg = decode_record(req.body)[0]
            assert (msg.topic, msg.body, msg.tags, msg.commit_log_offset) == ("DT", b"direct", "TagD", phys)
            assert ConsumeMessageDirectlyResult.decode(r.body).consume_result == "CR_SUCCESS"
            # the client's failure is relayed as is
            r = await _call(
                client, broker.addr, RequestCode.CONSUME_MESSAGE_DIRECTLY, **{**direct, "clientId": "cid-e"}
            )
            assert (r.code, r.remark) == (refused.code, refused.remark) and len(got_bad) == 1
            # GET_CONSUMER_RUNNING_INFO goes through the same relay
            r = await _call(
                client, broker.addr, RequestCode.GET_CONSUMER_RUNNING_INFO, consumerGroup="GD", clientId="cid-d"
            )
            assert (r.code, r.body) == (ResponseCode.SUCCESS, result)
            assert got[-1].code == RequestCode.GET_CONSUMER_RUNNING_INFO and got[-1].body == b""
            # unknown client, unknown message, bad ids
            r = await _call(client, broker.addr, RequestCode.CONSUME_MESSAGE_DIRECTLY, **{**direct, "clientId": "zz"})
            assert (r.code, r.remark) == (ResponseCode.CONSUMER_NOT_ONLINE, "The Consumer <GD> <zz> not online")
            for bad_id in (create_offset_msg_id("127.0.0.1", broker.port, 10**9), msg_id[:16] + f"{phys + 1:016X}"):
                r = await _call(
                    client, broker.addr, RequestCode.CONSUME_MESSAGE_DIRECTLY, **{**direct, "msgId": bad_id}
                )
                assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, f"can not find message by the msgId {bad_id}")
            r = await _call(client, broker.addr, RequestCode.CONSUME_MESSAGE_DIRECTLY, **{**direct, "msgId": "zz"})
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "can not find message by the msgId zz")
            no_id = {k: v for k, v in direct.items() if k != "msgId"}
            r = await _call(client, broker.addr, RequestCode.CONSUME_MESSAGE_DIRECTLY, **no_id)
            assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "the custom field <msgId> is null")
            assert len(got) == 2 and len(got_bad) == 1  # none of the failures reached a client
            # the consumer unregisters: not online any more
            bye = simple_cmd(RequestCode.UNREGISTER_CLIENT, clientID="cid-d", consumerGroup="GD")
            assert (await good.invoke(broker.addr, bye, 3.0)).code == ResponseCode.SUCCESS
            r = await _call(client, broker.addr, RequestCode.CONSUME_MESSAGE_DIRECTLY, **direct)
            assert (r.code, r.remark) == (ResponseCode.CONSUMER_NOT_ONLINE, "The Consumer <GD> <cid-d> not online")
        finally:
            await good.close()
            await bad.close()
