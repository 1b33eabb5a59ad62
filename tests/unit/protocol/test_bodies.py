"""JSON bodies: what each official client sends reads the same, what we write is standard JSON (or fastjson's object
keys where J needs them), both ResetOffsetBody forms, the compressed RegisterBrokerBody, and the tolerant reader."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import bodies as B
from protocol.bodies import (
    BodyDecodeError,
    ConsumeFromWhere,
    ConsumerData,
    ConsumeStats,
    ConsumeType,
    DataVersion,
    GetConsumerStatusBody,
    HeartbeatData,
    MessageModel,
    MessageQueue,
    OffsetWrapper,
    RegisterBrokerBody,
    ResetOffsetBody,
    SubscriptionData,
    TopicConfig,
    TopicConfigSerializeWrapper,
    TopicOffset,
    TopicRouteData,
    TopicStatsTable,
    loads_lenient,
)

CPP_HEARTBEAT = (
    b'{"clientID":"11659-127.0.0.1@DEFAULT","consumerDataSet":[{"consumeFromWhere":0,"consumeType":1,'
    b'"groupName":"CID_cap","messageModel":1,"subscriptionDataSet":[{"subString":"*","subVersion":"1795369865475",'
    b'"topic":"%RETRY%CID_cap"},{"codeSet":[0,0],"subString":"TagA || TagB","subVersion":"1795369865475",'
    b'"tagsSet":["TagA","TagB"],"topic":"TopicTest"}]}]}\n'
)
ALIONS_HEARTBEAT = (
    b'{"clientID":"192.0.2.2@12095","consumerDataSet":[{"groupName":"CID_alions","consumeType":"CONSUME_PASSIVELY",'
    b'"messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[{"topic":'
    b'"TopicTest","subString":"TagA || TagB","classFilterMode":false,"tagsSet":["TagA","TagB"],"codeSet":[2598919,'
    b'2598920],"subVersion":1795369929756}],"unitMode":false}],"producerDataSet":[]}'
)
J_HEARTBEAT = (
    b'{"clientID":"10.0.0.1@4242#123","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET",'
    b'"consumeType":"CONSUME_ACTIVELY","groupName":"CID_j","messageModel":"BROADCASTING","subscriptionDataSet":'
    b'[{"classFilterMode":false,"codeSet":[],"expressionType":"SQL92","subString":"a > 1","subVersion":1,'
    b'"tagsSet":[],"topic":"T"}],"unitMode":false}],"producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"},'
    b'{"groupName":"PID_j"}],"heartbeatFingerprint":7,"withoutSub":false}'
)
ROUTE_FASTJSON = (
    b'{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},"brokerName":"broker-a",'
    b'"cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,'
    b'"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}'
)


# -- heartbeats ------------------------------------------------------------------------------------------------------


def test_cpp_heartbeat_with_ordinals_string_versions_and_trailing_newline() -> None:
    hb = HeartbeatData.decode(CPP_HEARTBEAT)
    assert hb.client_id == "11659-127.0.0.1@DEFAULT" and hb.producer_data_set == []
    (c,) = hb.consumer_data_set
    assert (c.group_name, c.consume_type, c.message_model, c.consume_from_where) == (
        "CID_cap",
        ConsumeType.CONSUME_PASSIVELY,
        MessageModel.CLUSTERING,
        ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
    )
    assert c.message_model == "CLUSTERING"  # StrEnum: the name compares as text
    retry, topic = c.subscription_data_set
    assert (retry.topic, retry.sub_string, retry.tags_set, retry.code_set) == ("%RETRY%CID_cap", "*", [], [])
    assert topic.sub_version == 1795369865475 and topic.tags_set == ["TagA", "TagB"] and topic.code_set == [0, 0]
    assert topic.expression_type == "TAG"


def test_alions_and_j_heartbeats() -> None:
    (c,) = HeartbeatData.decode(ALIONS_HEARTBEAT).consumer_data_set
    assert c.consume_type == ConsumeType.CONSUME_PASSIVELY and c.subscription_data_set[0].sub_version == 1795369929756
    j = HeartbeatData.decode(J_HEARTBEAT)
    assert [p.group_name for p in j.producer_data_set] == ["CLIENT_INNER_PRODUCER", "PID_j"]
    (c,) = j.consumer_data_set
    assert (c.consume_type, c.message_model, c.consume_from_where) == (
        "CONSUME_ACTIVELY",
        "BROADCASTING",
        "CONSUME_FROM_FIRST_OFFSET",
    )
    assert c.subscription_data_set[0].expression_type == "SQL92"


def test_cpp_producer_heartbeat_has_no_consumer_set() -> None:
    hb = HeartbeatData.decode(b'{"clientID":"11209-127.0.0.1@DEFAULT","producerDataSet":[{"groupName":"PID_cap"}]}\n')
    assert hb.consumer_data_set == [] and hb.producer_data_set[0].group_name == "PID_cap"


def test_heartbeat_round_trip_writes_names() -> None:
    hb = HeartbeatData.decode(CPP_HEARTBEAT)
    wire = hb.encode()
    assert HeartbeatData.decode(wire) == hb
    doc = json.loads(wire)
    c = doc["consumerDataSet"][0]
    assert (c["consumeType"], c["messageModel"], c["consumeFromWhere"]) == (
        "CONSUME_PASSIVELY",
        "CLUSTERING",
        "CONSUME_FROM_LAST_OFFSET",
    )
    assert c["subscriptionDataSet"][1]["subVersion"] == 1795369865475


def test_heartbeat_built_in_python() -> None:
    hb = HeartbeatData(
        client_id="c",
        consumer_data_set=[
            ConsumerData(group_name="g", subscription_data_set=[SubscriptionData(topic="T", sub_string="a || b")])
        ],
    )
    assert HeartbeatData.decode(hb.encode()) == hb


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"", "empty body"),
        (b"not json", "not JSON"),
        (b"[]", "HeartbeatData"),
        (b'{"consumerDataSet":[]}', "clientID"),
        (b'{"clientID":"c","consumerDataSet":[{"groupName":"g","messageModel":7}]}', "ordinal 7 out of range"),
        (b'{"clientID":"c","consumerDataSet":[{"groupName":"g","consumeType":"PUSH"}]}', "consumeType"),
        (b'{"clientID":"c","consumerDataSet":[{"groupName":"g","messageModel":true}]}', "boolean"),
        (b"\xff\xfe", "UTF-8"),
    ],
)
def test_bad_heartbeats_raise_body_decode_error(body: bytes, match: str) -> None:
    with pytest.raises(BodyDecodeError, match=match):
        HeartbeatData.decode(body)


# -- routes ----------------------------------------------------------------------------------------------------------


def test_route_reads_fastjson_unquoted_keys_and_writes_quoted_ones() -> None:
    route = TopicRouteData.decode(ROUTE_FASTJSON)
    (bd,) = route.broker_datas
    assert bd.broker_addrs == {0: "127.0.0.1:10911", 1: "127.0.0.1:10921"} and bd.master_addr == "127.0.0.1:10911"
    assert route.broker("broker-a") is bd and route.broker("x") is None
    wire = route.encode()
    assert b'"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"}' in wire
    assert json.loads(wire)["orderTopicConf"] is None
    assert TopicRouteData.decode(wire) == route


def test_route_accepts_the_old_topic_syn_flag_key() -> None:
    route = TopicRouteData.decode(
        b'{"orderTopicConf":null,"queueDatas":[{"brokerName":"b","readQueueNums":4,"writeQueueNums":4,"perm":6,'
        b'"topicSynFlag":3}],"brokerDatas":[],"filterServerTable":null}'
    )
    assert route.queue_datas[0].topic_sys_flag == 3 and route.filter_server_table == {}
    assert b'"topicSysFlag":3' in route.encode()


def test_route_example_from_the_spec_round_trips_exactly() -> None:
    text = (
        '{"orderTopicConf":null,"queueDatas":[{"brokerName":"broker-a","readQueueNums":4,"writeQueueNums":4,"perm":6,'
        '"topicSysFlag":0}],"brokerDatas":[{"cluster":"DefaultCluster","brokerName":"broker-a","brokerAddrs":'
        '{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"}}],"filterServerTable":{}}'
    )
    assert TopicRouteData.decode(text).encode() == text.encode()


# -- registration ----------------------------------------------------------------------------------------------------


def _registration() -> RegisterBrokerBody:
    table = {
        "TopicTest": TopicConfig(topic_name="TopicTest", read_queue_nums=4, write_queue_nums=4, perm=6),
        "%RETRY%CID": TopicConfig(topic_name="%RETRY%CID", read_queue_nums=1, write_queue_nums=1, topic_sys_flag=1),
        "Ordered": TopicConfig(topic_name="Ordered", topic_filter_type="MULTI_TAG", order=True),
    }
    wrapper = TopicConfigSerializeWrapper(
        topic_config_table=table, data_version=DataVersion(counter=3, timestamp=1700000000000)
    )
    return RegisterBrokerBody(topic_config_serialize_wrapper=wrapper, filter_server_list=["10.0.0.9:40000"])


def test_register_body_plain_round_trip_matches_the_spec_shape() -> None:
    reg = _registration()
    doc = json.loads(reg.encode())
    assert doc["topicConfigSerializeWrapper"]["dataVersion"] == {"counter": 3, "timestamp": 1700000000000}
    assert doc["topicConfigSerializeWrapper"]["topicConfigTable"]["TopicTest"] == {
        "topicName": "TopicTest",
        "readQueueNums": 4,
        "writeQueueNums": 4,
        "perm": 6,
        "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": 0,
        "order": False,
        "attributes": {},  # J 5.x writes the map, empty or not
    }
    assert doc["filterServerList"] == ["10.0.0.9:40000"]
    assert RegisterBrokerBody.decode(reg.encode()) == reg
    assert reg.data_version.counter == 3 and set(reg.topic_config_table) == {"TopicTest", "%RETRY%CID", "Ordered"}


def test_topic_config_line_carries_attributes_as_j_5_writes_them() -> None:
    plain = TopicConfig(topic_name="T", read_queue_nums=4, write_queue_nums=4, perm=6)
    assert plain.encode_line() == "T 4 4 6 SINGLE_TAG"  # what a 4.9.7 name server reads
    fifo = TopicConfig(topic_name="F", read_queue_nums=2, write_queue_nums=2, attributes={"message.type": "FIFO"})
    assert fifo.encode_line() == 'F 2 2 6 SINGLE_TAG {"message.type":"FIFO"}'
    assert TopicConfig.decode_line(fifo.encode_line()).attributes == {"message.type": "FIFO"}
    # J ignores attributes that do not parse
    assert TopicConfig.decode_line("G 1 1 6 SINGLE_TAG {not json").attributes == {}


def test_register_body_compressed_round_trip_keeps_what_j_keeps() -> None:
    reg = _registration()
    wire = reg.encode(compressed=True)
    back = RegisterBrokerBody.decode(wire, compressed=True)
    assert back.data_version == reg.data_version and back.filter_server_list == reg.filter_server_list
    for name, tc in reg.topic_config_table.items():
        # J's TopicConfig.encode() carries name, queue numbers, perm and filter type only.
        assert back.topic_config_table[name] == tc.model_copy(update={"topic_sys_flag": 0, "order": False})


def test_register_body_compressed_layout_is_js() -> None:
    raw = zlib.decompress(_registration().encode(compressed=True))
    pos = 0

    def chunk() -> bytes:
        nonlocal pos
        (n,) = struct.unpack_from(">i", raw, pos)
        pos += 4 + n
        return raw[pos - n : pos]

    assert json.loads(chunk()) == {"counter": 3, "timestamp": 1700000000000}
    (count,) = struct.unpack_from(">i", raw, pos)
    pos += 4
    lines = [chunk().decode() for _ in range(count)]
    assert lines == ["TopicTest 4 4 6 SINGLE_TAG", "%RETRY%CID 1 1 6 SINGLE_TAG", "Ordered 16 16 6 MULTI_TAG"]
    assert json.loads(chunk()) == ["10.0.0.9:40000"] and pos == len(raw)


def _compressed(parts: list[bytes], *, count: int | None = None) -> bytes:
    dv = b'{"counter":1,"timestamp":2}'
    out = struct.pack(">i", len(dv)) + dv + struct.pack(">i", len(parts) if count is None else count)
    for p in parts:
        out += struct.pack(">i", len(p)) + p
    return out


def test_register_body_compressed_tolerates_5x_lines_and_null_filter_list() -> None:
    body = _compressed([b'T 8 8 6 SINGLE_TAG {"+message.type":"NORMAL"}']) + struct.pack(">i", 4) + b"null"
    reg = RegisterBrokerBody.decode(zlib.compress(body), compressed=True)
    assert reg.topic_config_table["T"].write_queue_nums == 8 and reg.filter_server_list == []


@pytest.mark.parametrize(
    ("inflated", "match"),
    [
        (_compressed([b"T 8 8 6"]) + struct.pack(">i", 2) + b"[]", "does not have 5 fields"),
        (_compressed([b"T x 8 6 SINGLE_TAG"]) + struct.pack(">i", 2) + b"[]", "bad number"),
        (_compressed([], count=-1), "negative topic count"),
        (_compressed([], count=3), "truncated"),
        (_compressed([]) + struct.pack(">i", 100) + b"[]", "length 100"),
        (_compressed([]) + struct.pack(">i", 5) + b"[1,2]", "list of strings"),
        (b"\x00\x00", "truncated"),
    ],
)
def test_register_body_compressed_errors(inflated: bytes, match: str) -> None:
    with pytest.raises(BodyDecodeError, match=match):
        RegisterBrokerBody.decode(zlib.compress(inflated), compressed=True)


def test_register_body_compressed_refuses_garbage_and_bombs() -> None:
    with pytest.raises(BodyDecodeError, match="not a zlib stream"):
        RegisterBrokerBody.decode(b"garbage!", compressed=True)
    bomb = zlib.compress(b"\x00" * (1 << 20))
    with pytest.raises(BodyDecodeError, match="inflates to more than"):
        RegisterBrokerBody.decode(bomb, compressed=True, max_inflated=1 << 16)


def test_register_body_empty_and_null_parts() -> None:
    assert RegisterBrokerBody.decode(b"") == RegisterBrokerBody()
    reg = RegisterBrokerBody.decode(b'{"topicConfigSerializeWrapper":null,"filterServerList":null}')
    assert reg.topic_config_table == {} and reg.filter_server_list == []
    # the table key names the topic when the value leaves topicName out
    reg = RegisterBrokerBody.decode(
        b'{"topicConfigSerializeWrapper":{"topicConfigTable":{"T":{"readQueueNums":2}},"dataVersion":null}}'
    )
    assert reg.topic_config_table["T"].topic_name == "T" and reg.data_version == DataVersion()


def test_topic_config_line() -> None:
    tc = TopicConfig(topic_name="T", read_queue_nums=3, write_queue_nums=2, perm=4, topic_filter_type="MULTI_TAG")
    assert tc.encode_line() == "T 3 2 4 MULTI_TAG"
    assert TopicConfig.decode_line(tc.encode_line()) == tc
    assert TopicConfig(topic_name="x").to_json() == {
        "topicName": "x",
        "readQueueNums": 16,
        "writeQueueNums": 16,
        "perm": 6,
        "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": 0,
        "order": False,
        "attributes": {},
    }


def test_data_version_bump_and_json() -> None:
    dv = DataVersion(counter=3, timestamp=1)
    assert dv.bumped(99) == DataVersion(counter=4, timestamp=99)
    assert dv.encode() == b'{"counter":3,"timestamp":1}'
    assert DataVersion.decode(b'{"timestamp":5,"counter":"6","stateVersion":0}') == DataVersion(counter=6, timestamp=5)


# -- lists, tables, locks, groups, connections -----------------------------------------------------------------------


def test_small_bodies_match_the_spec() -> None:
    cl = B.ClusterInfo.decode(
        b'{"brokerAddrTable":{"broker-a":{"cluster":"DefaultCluster","brokerName":"broker-a","brokerAddrs":'
        b'{0:"ip:port"}}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}'
    )
    assert cl.broker_addr_table["broker-a"].broker_addrs == {0: "ip:port"}
    assert cl.encode() == (
        b'{"brokerAddrTable":{"broker-a":{"cluster":"DefaultCluster","brokerName":"broker-a","brokerAddrs":'
        b'{"0":"ip:port"}}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}'
    )
    assert B.TopicList(topic_list=["TopicTest"]).encode() == b'{"topicList":["TopicTest"],"brokerAddr":null}'
    assert B.TopicList.decode(b'{"topicList":["a","b"]}').topic_list == ["a", "b"]
    assert B.KVTable(table={"k": "v"}).encode() == b'{"table":{"k":"v"}}'
    assert B.KVTable.decode(b'{"table":{"n":1,"b":true,"s":"x"}}').table == {"n": "1", "b": "true", "s": "x"}
    # the capture server wrote a space after the colon; both clients accepted it
    ids = B.ConsumerListBody.decode(b'{"consumerIdList": ["11659-127.0.0.1@DEFAULT"]}')
    assert ids.consumer_id_list == ["11659-127.0.0.1@DEFAULT"]
    assert B.encode_consumer_list(["a", "b"]) == b'{"consumerIdList":["a","b"]}'
    assert B.encode_topic_list({"b", "a"}) == b'{"topicList":["a","b"]}'


def test_lock_bodies() -> None:
    req = B.LockBatchRequestBody.decode(
        b'{"consumerGroup":"CID","clientId":"ip@inst","mqSet":[{"topic":"T","brokerName":"broker-a","queueId":0}]}'
    )
    assert req.mq_set == [MessageQueue("T", "broker-a", 0)] and req.only_this_broker is False
    assert B.LockBatchRequestBody.decode(req.encode()) == req
    assert json.loads(req.encode())["mqSet"] == [{"brokerName": "broker-a", "queueId": 0, "topic": "T"}]
    resp = B.encode_lock_response([("T", "broker-a", 0)])
    assert resp == b'{"lockOKMQSet":[{"brokerName":"broker-a","queueId":0,"topic":"T"}]}'
    assert B.LockBatchResponseBody.decode(resp).lock_ok_mq_set == [MessageQueue("T", "broker-a", 0)]
    with pytest.raises(BodyDecodeError, match="mqSet"):
        B.LockBatchRequestBody.decode(b'{"consumerGroup":"g","clientId":"c","mqSet":[{"topic":"T"}]}')


def test_connections() -> None:
    cc = B.ConsumerConnection.decode(
        b'{"connectionSet":[{"clientId":"c1","clientAddr":"1.2.3.4:5","language":"CPP","version":63},'
        b'{"clientId":"c2","clientAddr":"1.2.3.5:6","language":0,"version":407}],"subscriptionTable":{"T":'
        b'{"topic":"T","subString":"*","subVersion":"9"}},"consumeType":1,"messageModel":"CLUSTERING",'
        b'"consumeFromWhere":4}'
    )
    assert [c.language for c in cc.connection_set] == ["CPP", "JAVA"]
    assert cc.subscription_table["T"].sub_version == 9
    assert (cc.consume_type, cc.message_model, cc.consume_from_where) == (
        "CONSUME_PASSIVELY",
        "CLUSTERING",
        "CONSUME_FROM_FIRST_OFFSET",
    )
    assert B.ConsumerConnection.decode(cc.encode()) == cc
    pc = B.ProducerConnection(
        connection_set=[B.Connection(client_id="p", client_addr="a:1", language="PYTHON", version=407)]
    )
    assert B.ProducerConnection.decode(pc.encode()) == pc
    assert B.ConsumerConnection.decode(b"{}").consume_type is None


# -- MessageQueue and the object-key bodies --------------------------------------------------------------------------


def test_message_queue_order_hash_and_text() -> None:
    qs = [MessageQueue("T", "b", 1), MessageQueue("A", "z", 0), MessageQueue("T", "a", 9), MessageQueue("T", "b", 0)]
    assert sorted(qs) == [
        MessageQueue("A", "z", 0),
        MessageQueue("T", "a", 9),
        MessageQueue("T", "b", 0),
        MessageQueue("T", "b", 1),
    ]
    assert len({MessageQueue("T", "b", 1), MessageQueue("T", "b", 1)}) == 1
    assert str(qs[0]) == "MessageQueue [topic=T, brokerName=b, queueId=1]"
    assert qs[0].json_key() == '{"brokerName":"b","queueId":1,"topic":"T"}'
    assert MessageQueue.from_json({"topic": "T", "brokerName": "b", "queueId": "1"}) == qs[0]


OFFSETS = {
    MessageQueue("T", "broker-a", 0): 100,
    MessageQueue("T", "broker-a", 1): -1,
    MessageQueue("T", "broker-b", 0): 7,
}


def test_reset_offset_body_j_form_is_fastjsons() -> None:
    wire = ResetOffsetBody(OFFSETS).encode()
    assert wire == (
        b'{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:100,'
        b'{"brokerName":"broker-a","queueId":1,"topic":"T"}:-1,'
        b'{"brokerName":"broker-b","queueId":0,"topic":"T"}:7}}'
    )
    with pytest.raises(ValueError):
        json.loads(wire)  # not JSON: the reason it is hand-written
    assert ResetOffsetBody.decode(wire).offset_table == OFFSETS


def test_reset_offset_body_c_form_is_a_list() -> None:
    wire = ResetOffsetBody(OFFSETS).encode(cpp=True)
    doc = json.loads(wire)
    assert doc["offsetTable"][0] == {"brokerName": "broker-a", "offset": 100, "queueId": 0, "topic": "T"}
    assert ResetOffsetBody.decode(wire).offset_table == OFFSETS


def test_reset_offset_body_tolerant_reads() -> None:
    pretty = (
        b'{"offsetTable" : {\n  {"topic": "T", "queueId": 0, "brokerName": "broker-a"} : 100 ,\n'
        b'  {\n   "brokerName" : "broker-a",\n   "queueId" : 1,\n   "topic" : "T"\n} : "18446744073709551615"\n}}'
    )
    assert ResetOffsetBody.decode(pretty).offset_table == {
        MessageQueue("T", "broker-a", 0): 100,
        MessageQueue("T", "broker-a", 1): -1,  # C++'s unsigned -1
    }
    to_string_keys = b'{"offsetTable":{"MessageQueue [topic=T, brokerName=b, queueId=2]":5}}'
    assert ResetOffsetBody.decode(to_string_keys).offset_table == {MessageQueue("T", "b", 2): 5}
    json_text_keys = b'{"offsetTable":{"{\\"brokerName\\":\\"b\\",\\"queueId\\":3,\\"topic\\":\\"T\\"}":6}}'
    assert ResetOffsetBody.decode(json_text_keys).offset_table == {MessageQueue("T", "b", 3): 6}
    assert ResetOffsetBody.decode(b'{"offsetTable":{}}').offset_table == {}
    assert ResetOffsetBody.decode(b"{}").offset_table == {}


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"[1]",
        b'{"offsetTable":{"x":1}}',
        b'{"offsetTable":{{"topic":"T"}:1}}',
        b'{"offsetTable":[{"topic":"T","brokerName":"b","queueId":0}]}',
        b'{"offsetTable":[{"topic":"T","brokerName":"b","queueId":0,"offset":"x"}]}',
        b'{"offsetTable":[1]}',
        b'{"offsetTable":7}',
    ],
)
def test_reset_offset_body_bad_input(body: bytes) -> None:
    with pytest.raises(BodyDecodeError):
        ResetOffsetBody.decode(body)


def test_reset_offset_compat_helpers() -> None:
    tuples = {(mq.topic, mq.broker_name, mq.queue_id): o for mq, o in OFFSETS.items()}
    for cpp in (False, True):
        assert B.decode_reset_offset_body(B.encode_reset_offset_body(tuples, cpp=cpp)) == tuples


def test_consumer_status_body() -> None:
    body = GetConsumerStatusBody(
        message_queue_table={MessageQueue("T", "b", 0): 5},
        consumer_table={"c1": {MessageQueue("T", "b", 0): 5}, "c2": {MessageQueue("T", "b", 1): 9}},
    )
    wire = body.encode()
    assert wire.startswith(b'{"consumerTable":{"c1":{{"brokerName":"b","queueId":0,"topic":"T"}:5}')
    assert GetConsumerStatusBody.decode(wire) == body
    assert GetConsumerStatusBody.decode(b"{}") == GetConsumerStatusBody()


def test_topic_stats_table() -> None:
    t = TopicStatsTable({MessageQueue("T", "b", 0): TopicOffset(1, 10, 1700000000000)})
    wire = t.encode()
    assert wire == (
        b'{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:'
        b'{"lastUpdateTimestamp":1700000000000,"maxOffset":10,"minOffset":1}}}'
    )
    assert TopicStatsTable.decode(wire) == t


def test_consume_stats() -> None:
    s = ConsumeStats(
        {
            MessageQueue("T", "b", 0): OffsetWrapper(10, 4, 1700000000000),
            MessageQueue("T", "b", 1): OffsetWrapper(5, 5),
        },
        1.5,
    )
    assert s.total_diff() == 6
    wire = s.encode()
    assert wire.startswith(
        b'{"consumeTps":1.5,"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"brokerOffset":10,'
    )
    assert ConsumeStats.decode(wire) == s
    assert ConsumeStats.decode(b'{"consumeTps":"2","offsetTable":{}}').consume_tps == 2.0
    with pytest.raises(BodyDecodeError, match="consumeTps"):
        ConsumeStats.decode(b'{"consumeTps":true}')


# -- the tolerant reader ---------------------------------------------------------------------------------------------


def test_loads_lenient_fastjson_dialect() -> None:
    assert loads_lenient(b'{0:"a",-1:"b",1.5:"c",name:"d",}') == {"0": "a", "-1": "b", "1.5": "c", "name": "d"}
    assert loads_lenient('{"a":[1,2,],"b":{}}') == {"a": [1, 2], "b": {}}
    # a regex-based quoter would corrupt this string value
    assert loads_lenient(b'{0:"x,1:y {2:z}"}') == {"0": "x,1:y {2:z}"}
    frozen = loads_lenient(b'{{"queueId":1,"brokerName":"b"}:3}')
    assert frozen == {(("brokerName", "b"), ("queueId", 1)): 3}
    mqs = loads_lenient(b'{{"queueId":1,"brokerName":"b","topic":"T"}:3}', object_key=MessageQueue.from_json)
    assert mqs == {MessageQueue("T", "b", 1): 3}
    assert loads_lenient(b'{"k":"\\u00e9\\n"}\n') == {"k": "é\n"}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        '{"a":}',
        '{"a" 1}',
        "[1 2]",
        '{"a":"\\x"}',
        '{"a":"unterminated}',
        "{[1]:2}",
        "{0:1}x",
        "{0:1",
        "nul",
        '{"a":"\x01"}',
    ],
)
def test_loads_lenient_errors(text: str) -> None:
    with pytest.raises(BodyDecodeError):
        loads_lenient(text)


def test_loads_lenient_depth_limits() -> None:
    with pytest.raises(BodyDecodeError, match="deep"):
        loads_lenient("{0:" * 300 + "1" + "}" * 300)
    with pytest.raises(BodyDecodeError, match="deep"):
        loads_lenient("[" * 100_000 + "]" * 100_000)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(value=json_values)
@settings(max_examples=200, deadline=None)
def test_loads_lenient_agrees_with_json(value: Any) -> None:
    text = json.dumps(value)
    assert loads_lenient(text) == json.loads(text)
    # the fallback parser on its own agrees too
    assert B._LenientParser(text, B._freeze).parse() == json.loads(text)


@given(text=st.text(alphabet='{}[]:,"0123 abtrue\\nl-.eE', max_size=40))
@settings(max_examples=500, deadline=None)
def test_loads_lenient_raises_only_body_decode_errors(text: str) -> None:
    try:
        loads_lenient(text)
    except BodyDecodeError:
        pass


mqs = st.builds(MessageQueue, st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8), st.integers(0, 64))
longs = st.integers(-(2**63), 2**63 - 1)


@given(table=st.dictionaries(mqs, longs, max_size=8), cpp=st.booleans())
@settings(max_examples=200, deadline=None)
def test_reset_offset_body_round_trips(table: dict[MessageQueue, int], cpp: bool) -> None:
    assert ResetOffsetBody.decode(ResetOffsetBody(table).encode(cpp=cpp)).offset_table == table


@given(
    table=st.dictionaries(mqs, st.builds(OffsetWrapper, longs, longs, longs, longs), max_size=6),
    tps=st.floats(allow_nan=False, allow_infinity=False, width=32),
)
@settings(max_examples=100, deadline=None)
def test_consume_stats_round_trips(table: dict[MessageQueue, OffsetWrapper], tps: float) -> None:
    assert ConsumeStats.decode(ConsumeStats(table, tps).encode()) == ConsumeStats(table, tps)


@given(
    table=st.dictionaries(mqs, st.builds(TopicOffset, longs, longs, longs), max_size=6),
    consumers=st.dictionaries(st.text(max_size=6), st.dictionaries(mqs, longs, max_size=3), max_size=3),
)
@settings(max_examples=100, deadline=None)
def test_mq_keyed_bodies_round_trip(table: dict[MessageQueue, TopicOffset], consumers: dict[str, Any]) -> None:
    assert TopicStatsTable.decode(TopicStatsTable(table).encode()).offset_table == table
    status = GetConsumerStatusBody({mq: t.min_offset for mq, t in table.items()}, consumers)
    assert GetConsumerStatusBody.decode(status.encode()) == status


subscriptions = st.builds(
    SubscriptionData,
    topic=st.text(min_size=1, max_size=10),
    sub_string=st.text(max_size=10),
    tags_set=st.lists(st.text(max_size=5), max_size=3),
    code_set=st.lists(st.integers(-(2**31), 2**31 - 1), max_size=3),
    sub_version=longs,
    expression_type=st.sampled_from(["TAG", "SQL92"]),
)
heartbeats = st.builds(
    HeartbeatData,
    client_id=st.text(min_size=1, max_size=20),
    producer_data_set=st.lists(st.builds(B.ProducerData, group_name=st.text(max_size=8)), max_size=3),
    consumer_data_set=st.lists(
        st.builds(
            ConsumerData,
            group_name=st.text(max_size=8),
            consume_type=st.sampled_from(ConsumeType),
            message_model=st.sampled_from(MessageModel),
            consume_from_where=st.sampled_from(ConsumeFromWhere),
            subscription_data_set=st.lists(subscriptions, max_size=3),
            unit_mode=st.booleans(),
        ),
        max_size=3,
    ),
)


@given(hb=heartbeats)
@settings(max_examples=100, deadline=None)
def test_heartbeat_round_trips(hb: HeartbeatData) -> None:
    assert HeartbeatData.decode(hb.encode()) == hb


# -- properties text and perms ---------------------------------------------------------------------------------------


def test_properties_text() -> None:
    props = {"brokerName": "broker-a", "flushDiskType": "ASYNC_FLUSH", "autoCreateTopicEnable": True, "n": 3}
    wire = B.encode_properties_text(props)
    assert wire == b"brokerName=broker-a\nflushDiskType=ASYNC_FLUSH\nautoCreateTopicEnable=true\nn=3\n"
    assert B.decode_properties_text(wire) == {
        k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in props.items()
    }
    text = (
        "# comment\n! also a comment\n\n  key1 = value one  \nkey2:v2\nkey3 v3\nmulti=a\\\n    b\\\n  c\n"
        "esc\\=key=tab\\there\\u00e9\nempty=\nmessageDelayLevel=1s 5s 10s\n"
    )
    assert B.decode_properties_text(text) == {
        "key1": "value one  ",
        "key2": "v2",
        "key3": "v3",
        "multi": "abc",
        "esc=key": "tab\there\u00e9",
        "empty": "",
        "messageDelayLevel": "1s 5s 10s",
    }
    assert B.encode_properties_text({"skip": None}) == b""


def test_perm_helpers() -> None:
    assert (B.PERM_READ, B.PERM_WRITE, B.PERM_INHERIT) == (4, 2, 1)
    assert B.perm_to_string(6) == "RW-" and B.perm_to_string(7) == "RWX" and B.perm_to_string(0) == "---"
    assert B.is_readable(4) and not B.is_writeable(4) and B.is_writeable(2) and B.is_inherited(1)
