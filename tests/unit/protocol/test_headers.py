"""Typed custom headers: round trips, the required/optional split of every header (J's ``@CFNotNull``), the error
texts, the values the C++ and ali-ons clients send, and agreement between the hot headers' fast and checked paths."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import headers as H
from protocol.codes import RequestCode
from protocol.errors import MalformedFrameError
from protocol.headers import (
    BadHeaderFieldError,
    MalformedHeaderError,
    MissingHeaderFieldError,
    PullMessageRequestHeader,
    PullMessageResponseHeader,
    ResetOffsetRequestHeader,
    SendMessageRequestHeader,
    SendMessageRequestHeaderV2,
    SendMessageResponseHeader,
)

PROPS = "TAGS\x01TagA\x02KEYS\x01k1 k2\x02UNIQ_KEY\x010100007F000004C0000011BF56750100\x02WAIT\x01true\x02"

# One example of every header class, and the wire keys J marks @CFNotNull for it.
EXAMPLES: list[tuple[Any, set[str]]] = [
    (
        SendMessageRequestHeader("PID", "T", "TBW102", 4, 1, 0, 1795369819281, 0, PROPS, 0, False, True, 16, "bk"),
        {
            "producerGroup",
            "topic",
            "defaultTopic",
            "defaultTopicQueueNums",
            "queueId",
            "sysFlag",
            "bornTimestamp",
            "flag",
        },
    ),
    (
        SendMessageRequestHeaderV2("PID", "T", "TBW102", 4, 1, 0, 17, 0, PROPS, 2, True, 16, False, "bk"),
        set("abcdefgh"),
    ),
    (
        SendMessageResponseHeader("7F00000100002A9F0000000000001092", 3, 42, "tx", "R", False),
        {"msgId", "queueId", "queueOffset"},
    ),
    (
        PullMessageRequestHeader("CID", "T", 1, 100, 32, 7, 99, 15000, 1795369865475, "TagA || TagB", "TAG"),
        {
            "consumerGroup",
            "topic",
            "queueId",
            "queueOffset",
            "maxMsgNums",
            "sysFlag",
            "commitOffset",
            "suspendTimeoutMillis",
            "subVersion",
        },
    ),
    (PullMessageResponseHeader(1, 132, 5, 1000), {"nextBeginOffset", "minOffset", "maxOffset"}),
    (H.QueryConsumerOffsetRequestHeader("CID", "T", 2), {"consumerGroup", "topic", "queueId"}),
    (H.UpdateConsumerOffsetRequestHeader("CID", "T", 2, 7), {"consumerGroup", "topic", "queueId", "commitOffset"}),
    (H.OffsetResponseHeader(-1), {"offset"}),
    (H.QueueRequestHeader("T", 3), {"topic", "queueId"}),
    (H.SearchOffsetRequestHeader("T", 3, 1700000000000), {"topic", "queueId", "timestamp"}),
    (H.GetEarliestMsgStoretimeResponseHeader(1700000000000), {"timestamp"}),
    (H.UnregisterClientRequestHeader("ip@pid", "PID", "CID"), {"clientID"}),
    (H.GetConsumerListByGroupRequestHeader("CID"), {"consumerGroup"}),
    (H.NotifyConsumerIdsChangedRequestHeader("CID"), {"consumerGroup"}),
    (H.ConsumerSendMsgBackRequestHeader(4242, "CID", 3, "ORIG", "T", True, 16), {"offset", "group", "delayLevel"}),
    (H.ViewMessageRequestHeader(4242), {"offset"}),
    (
        H.QueryMessageRequestHeader("T", "k1", 32, 1, 2, True),
        {"topic", "key", "maxNum", "beginTimestamp", "endTimestamp"},
    ),
    (H.QueryMessageResponseHeader(1700000000000, 4242), {"indexLastUpdateTimestamp", "indexLastUpdatePhyoffset"}),
    (
        H.EndTransactionRequestHeader("PID", 5, 4242, 8, "MSGID", True, "TXID"),
        {"producerGroup", "tranStateTableOffset", "commitLogOffset", "commitOrRollback", "msgId"},
    ),
    (
        H.CheckTransactionStateRequestHeader(5, 4242, "MSGID", "TXID", "OFFID"),
        {"tranStateTableOffset", "commitLogOffset"},
    ),
    (
        H.ReplyMessageRequestHeader(
            "PG",
            "C_REPLY_TOPIC",
            "TBW102",
            4,
            0,
            0,
            1700000000000,
            0,
            "1.2.3.4:5",
            "6.7.8.9:10911",
            1700000000001,
            "MSG_TYPE\x01reply\x02",
            0,
            False,
        ),
        {
            "producerGroup",
            "topic",
            "defaultTopic",
            "defaultTopicQueueNums",
            "queueId",
            "sysFlag",
            "bornTimestamp",
            "flag",
            "bornHost",
            "storeHost",
            "storeTimestamp",
        },
    ),
    (ResetOffsetRequestHeader("T", "CID", 1700000000000, True), {"topic", "group", "timestamp"}),
    (H.GetConsumerStatusRequestHeader("T", "CID", "1.2.3.4:5"), {"topic", "group"}),
    (H.GetConsumerRunningInfoRequestHeader("CID", "ip@pid", True), {"consumerGroup", "clientId"}),
    (
        H.CreateTopicRequestHeader("T", "TBW102", 8, 8, 6, "MULTI_TAG", 1, True),
        {"topic", "defaultTopic", "readQueueNums", "writeQueueNums", "perm", "topicFilterType"},
    ),
    (
        H.CreateTopicRequestHeader("T", "TBW102", 8, 8, 6, "SINGLE_TAG", 0, False, "+message.type=FIFO"),
        {"topic", "defaultTopic", "readQueueNums", "writeQueueNums", "perm", "topicFilterType"},
    ),
    (H.GetTopicConfigRequestHeader("T", True), {"topic"}),
    (H.ResumeCheckHalfMessageRequestHeader("7F0000010000000000000000", "T"), {"msgId"}),
    (H.TopicRequestHeader("T"), {"topic"}),
    (H.GetRouteInfoRequestHeader("T", True), {"topic"}),
    (H.DeleteSubscriptionGroupRequestHeader("CID", True), {"groupName"}),
    (H.GetConsumeStatsRequestHeader("CID", "T"), {"consumerGroup"}),
    (H.ConsumerGroupRequestHeader("CID"), {"consumerGroup"}),
    (H.ProducerGroupRequestHeader("PID"), {"producerGroup"}),
    (H.GetBrokerConfigResponseHeader('{"counter":1,"timestamp":2}'), {"version"}),
    (
        H.RegisterBrokerRequestHeader("broker-a", "1.2.3.4:10911", "DefaultCluster", "1.2.3.4:10912", 0, True, 99),
        {"brokerName", "brokerAddr", "clusterName", "haServerAddr", "brokerId"},
    ),
    (H.RegisterBrokerResponseHeader("1.2.3.4:10912", "1.2.3.4:10911"), set()),
    (
        H.UnregisterBrokerRequestHeader("broker-a", "1.2.3.4:10911", "DefaultCluster", 1),
        {"brokerName", "brokerAddr", "clusterName", "brokerId"},
    ),
    (H.QueryDataVersionResponseHeader(True), {"changed"}),
    (H.KVConfigRequestHeader("NS", "k", "v"), {"namespace", "key"}),
    (H.PutKVConfigRequestHeader("NS", "k", "v"), {"namespace", "key", "value"}),
    (H.NamespaceKeyRequestHeader("NS", "k"), {"namespace", "key"}),
    (H.GetKVConfigResponseHeader("v"), set()),
    (H.GetKVListByNamespaceRequestHeader("NS"), {"namespace"}),
    (H.GetTopicsByClusterRequestHeader("DefaultCluster"), {"cluster"}),
    (H.BrokerNameRequestHeader("broker-a"), {"brokerName"}),
    (H.WipeWritePermOfBrokerResponseHeader(3), {"wipeTopicCount"}),
    (H.AddWritePermOfBrokerResponseHeader(3), {"addTopicCount"}),
    (H.QueryConsumeTimeSpanRequestHeader("T", "G"), {"topic", "group"}),
    (H.QueryConsumeQueueRequestHeader("T", 1, 2, 3, "G"), {"topic", "queueId", "index", "count"}),
    (H.CloneGroupOffsetRequestHeader("S", "D", "T", True), {"srcGroup", "destGroup"}),
    (H.GetConsumeStatsInBrokerHeader(True), {"isOrder"}),
    (H.ConsumeMessageDirectlyResultRequestHeader("G", "cid", "AB", "b"), {"consumerGroup"}),
]
IDS = [type(h).__name__ for h, _ in EXAMPLES]


def test_every_header_class_has_an_example() -> None:
    classes = {
        obj
        for obj in vars(H).values()
        if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__.startswith(H.__name__ + ".")
    }
    assert classes == {type(h) for h, _ in EXAMPLES}


@pytest.mark.parametrize(("header", "required"), EXAMPLES, ids=IDS)
def test_round_trip_writes_strings_only(header: Any, required: set[str]) -> None:
    wire = header.to_ext_fields()
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in wire.items())
    assert type(header).from_ext_fields(wire) == header
    assert type(header).from_ext_fields(dict(wire)) == header  # no aliasing of the input


@pytest.mark.parametrize(("header", "required"), EXAMPLES, ids=IDS)
def test_missing_required_field_has_js_text_and_optional_fields_may_be_absent(header: Any, required: set[str]) -> None:
    wire = header.to_ext_fields()
    assert required <= wire.keys()
    for key in wire:
        partial = {k: v for k, v in wire.items() if k != key}
        if key in required:
            with pytest.raises(MissingHeaderFieldError) as info:
                type(header).from_ext_fields(partial)
            assert str(info.value) == f"the custom field <{key}> is null"
            assert info.value.field == key
            assert isinstance(info.value, MalformedHeaderError | MalformedFrameError | ValueError)
        else:
            type(header).from_ext_fields(partial)


@pytest.mark.parametrize(("header", "required"), EXAMPLES, ids=IDS)
def test_a_value_of_the_wrong_type_names_the_field_and_value(header: Any, required: set[str]) -> None:
    wire = header.to_ext_fields()
    for key, value in wire.items():
        if value.lstrip("-").isdigit() or value in ("true", "false"):
            bad = {**wire, key: "abc"}
            with pytest.raises(BadHeaderFieldError) as info:
                type(header).from_ext_fields(bad)
            assert info.value.field == key
            assert f"<{key}>" in str(info.value) and "'abc'" in str(info.value)


def test_booleans_accept_any_case_and_digits() -> None:
    base = SendMessageRequestHeader("P", "T", "TBW102", 4, 0, 0, 1, 0).to_ext_fields()
    for text, want in [("true", True), ("TRUE", True), ("True", True), ("1", True), ("false", False), ("0", False)]:
        for key, attr in (("unitMode", "unit_mode"), ("batch", "batch")):
            assert getattr(SendMessageRequestHeader.from_ext_fields({**base, key: text}), attr) is want
    with pytest.raises(BadHeaderFieldError, match=r"<batch> is not a valid boolean: 'yes'"):
        SendMessageRequestHeader.from_ext_fields({**base, "batch": "yes"})


def test_cpp_send_header_values() -> None:
    """What C++ 1.2.4 sends (golden cpp_producer_003), after the frame decoder turned JSON ints into text."""
    ext = {
        "AccessKey": "",
        "OnsChannel": "ALIYUN",
        "Signature": "x",
        "batch": "0",
        "bornTimestamp": "1795369819281",
        "defaultTopic": "TBW102",
        "defaultTopicQueueNums": "4",
        "flag": "0",
        "producerGroup": "PID_cap",
        "properties": PROPS,
        "queueId": "0",
        "reconsumeTimes": "0",
        "sysFlag": "0",
        "topic": "TopicTest",
        "unitMode": "0",
    }
    h = SendMessageRequestHeader.from_ext_fields(ext)
    assert (h.topic, h.queue_id, h.unit_mode, h.batch, h.reconsume_times, h.max_reconsume_times) == (
        "TopicTest",
        0,
        False,
        False,
        0,
        None,
    )


def test_v1_v2_conversions_agree() -> None:
    h = SendMessageRequestHeader("pg", "T", "TBW102", 4, 1, 0, 123, 0, "TAGS\x01A\x02", 0, False, True, 16, "b")
    assert h.to_v2().to_v1() == h
    assert h.to_v2_ext_fields() == h.to_v2().to_ext_fields()
    v2wire = h.to_v2_ext_fields()
    assert SendMessageRequestHeader.from_v2_ext_fields(v2wire) == h
    assert SendMessageRequestHeaderV2.from_ext_fields(v2wire).to_v1() == h
    assert set(v2wire) == set("abcdefghijklmn")
    assert (v2wire["k"], v2wire["m"], v2wire["l"]) == ("false", "true", "16")


def test_fast_built_headers_are_frozen_and_hashable() -> None:
    ref = SendMessageRequestHeaderV2("a", "b", "c", 1, 2, 3, 4, 5)
    h = SendMessageRequestHeaderV2.from_ext_fields(ref.to_ext_fields())
    assert h == ref and hash(h) == hash(ref)
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.a = "x"  # type: ignore[misc]
    p = PullMessageRequestHeader.from_ext_fields(EXAMPLES[3][0].to_ext_fields())
    assert repr(p).startswith("PullMessageRequestHeader(consumer_group='CID'")


def test_optional_and_defaulted_fields() -> None:
    assert PullMessageResponseHeader.from_ext_fields({"nextBeginOffset": "5", "minOffset": "0", "maxOffset": "9"}) == (
        PullMessageResponseHeader(0, 5, 0, 9)
    )
    r = SendMessageResponseHeader.from_ext_fields({"msgId": "M", "queueId": "0", "queueOffset": "0"})
    assert (r.transaction_id, r.msg_region, r.trace_on) == (None, "DefaultRegion", True)
    # C++ sends the group it does not have as "".
    u = H.UnregisterClientRequestHeader.from_ext_fields({"clientID": "c", "producerGroup": "", "consumerGroup": "CID"})
    assert (u.producer_group, u.consumer_group) == (None, "CID")
    assert H.GetRouteInfoRequestHeader.from_ext_fields({"topic": "T"}).accept_standard_json_only is None
    assert H.GetRouteInfoRequestHeader.from_ext_fields(
        {"topic": "T", "acceptStandardJsonOnly": "true"}
    ).accept_standard_json_only
    assert H.GetConsumeStatsRequestHeader.from_ext_fields({"consumerGroup": "g", "topic": ""}).topic is None
    q = H.QueryMessageRequestHeader("T", "k", 1, 2, 3)
    assert "_UNIQUE_KEY_QUERY" not in q.to_ext_fields()
    assert H.RegisterBrokerResponseHeader().to_ext_fields() == {}
    assert H.RegisterBrokerRequestHeader.from_ext_fields(
        {"brokerName": "b", "brokerAddr": "a", "clusterName": "c", "haServerAddr": "h", "brokerId": "0"}
    ) == H.RegisterBrokerRequestHeader("b", "a", "c", "h", 0, False, 0)


def test_reset_offset_is_force_for_cpp_is_numeric() -> None:
    h = ResetOffsetRequestHeader("T", "CID", 123, True)
    assert h.to_ext_fields()["isForce"] == "true"
    assert h.to_ext_fields(numeric_bool=True)["isForce"] == "1"
    assert ResetOffsetRequestHeader("T", "CID", 123, False).to_ext_fields(numeric_bool=True)["isForce"] == "0"
    assert ResetOffsetRequestHeader.from_ext_fields(h.to_ext_fields(numeric_bool=True)) == h


def test_registries_cover_the_commands() -> None:
    expect_request = {
        RequestCode.SEND_MESSAGE: SendMessageRequestHeader,
        RequestCode.SEND_MESSAGE_V2: SendMessageRequestHeaderV2,
        RequestCode.SEND_BATCH_MESSAGE: SendMessageRequestHeaderV2,
        RequestCode.PULL_MESSAGE: PullMessageRequestHeader,
        RequestCode.UPDATE_AND_CREATE_TOPIC: H.CreateTopicRequestHeader,
        RequestCode.GET_TOPIC_CONFIG: H.GetTopicConfigRequestHeader,
        RequestCode.RESUME_CHECK_HALF_MESSAGE: H.ResumeCheckHalfMessageRequestHeader,
        RequestCode.DELETE_TOPIC_IN_BROKER: H.TopicRequestHeader,
        RequestCode.DELETE_TOPIC_IN_NAMESRV: H.TopicRequestHeader,
        RequestCode.DELETE_SUBSCRIPTIONGROUP: H.DeleteSubscriptionGroupRequestHeader,
        RequestCode.GET_TOPIC_STATS_INFO: H.TopicRequestHeader,
        RequestCode.GET_CONSUME_STATS: H.GetConsumeStatsRequestHeader,
        RequestCode.GET_CONSUMER_CONNECTION_LIST: H.ConsumerGroupRequestHeader,
        RequestCode.GET_PRODUCER_CONNECTION_LIST: H.ProducerGroupRequestHeader,
        RequestCode.GET_CONSUMER_RUNNING_INFO: H.GetConsumerRunningInfoRequestHeader,
        RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: ResetOffsetRequestHeader,
        RequestCode.RESET_CONSUMER_CLIENT_OFFSET: ResetOffsetRequestHeader,
        RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT: H.GetConsumerStatusRequestHeader,
        RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: H.GetConsumerStatusRequestHeader,
        RequestCode.CHECK_TRANSACTION_STATE: H.CheckTransactionStateRequestHeader,
        RequestCode.END_TRANSACTION: H.EndTransactionRequestHeader,
        RequestCode.NOTIFY_CONSUMER_IDS_CHANGED: H.NotifyConsumerIdsChangedRequestHeader,
        RequestCode.QUERY_MESSAGE: H.QueryMessageRequestHeader,
        RequestCode.VIEW_MESSAGE_BY_ID: H.ViewMessageRequestHeader,
        RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: H.SearchOffsetRequestHeader,
        RequestCode.GET_MIN_OFFSET: H.QueueRequestHeader,
        RequestCode.GET_MAX_OFFSET: H.QueueRequestHeader,
        RequestCode.GET_EARLIEST_MSG_STORETIME: H.QueueRequestHeader,
        RequestCode.QUERY_CONSUMER_OFFSET: H.QueryConsumerOffsetRequestHeader,
        RequestCode.UPDATE_CONSUMER_OFFSET: H.UpdateConsumerOffsetRequestHeader,
        RequestCode.CONSUMER_SEND_MSG_BACK: H.ConsumerSendMsgBackRequestHeader,
        RequestCode.UNREGISTER_CLIENT: H.UnregisterClientRequestHeader,
        RequestCode.GET_CONSUMER_LIST_BY_GROUP: H.GetConsumerListByGroupRequestHeader,
        RequestCode.REGISTER_BROKER: H.RegisterBrokerRequestHeader,
        RequestCode.UNREGISTER_BROKER: H.UnregisterBrokerRequestHeader,
        RequestCode.GET_ROUTEINFO_BY_TOPIC: H.GetRouteInfoRequestHeader,
        RequestCode.PUT_KV_CONFIG: H.PutKVConfigRequestHeader,
        RequestCode.GET_KV_CONFIG: H.NamespaceKeyRequestHeader,
        RequestCode.DELETE_KV_CONFIG: H.NamespaceKeyRequestHeader,
        RequestCode.GET_KVLIST_BY_NAMESPACE: H.GetKVListByNamespaceRequestHeader,
        RequestCode.GET_TOPICS_BY_CLUSTER: H.GetTopicsByClusterRequestHeader,
        RequestCode.WIPE_WRITE_PERM_OF_BROKER: H.BrokerNameRequestHeader,
        RequestCode.ADD_WRITE_PERM_OF_BROKER: H.BrokerNameRequestHeader,
        RequestCode.QUERY_DATA_VERSION: H.UnregisterBrokerRequestHeader,
        RequestCode.SEND_REPLY_MESSAGE: SendMessageRequestHeader,
        RequestCode.SEND_REPLY_MESSAGE_V2: SendMessageRequestHeaderV2,
        RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT: H.ReplyMessageRequestHeader,
    }
    assert dict(H.REQUEST_HEADERS) == expect_request
    assert H.RESPONSE_HEADERS[RequestCode.PULL_MESSAGE] is PullMessageResponseHeader
    assert H.RESPONSE_HEADERS[RequestCode.SEND_MESSAGE_V2] is SendMessageResponseHeader
    assert H.RESPONSE_HEADERS[RequestCode.QUERY_CONSUMER_OFFSET] is H.OffsetResponseHeader
    assert H.RESPONSE_HEADERS[RequestCode.REGISTER_BROKER] is H.RegisterBrokerResponseHeader
    assert H.RESPONSE_HEADERS[RequestCode.QUERY_MESSAGE] is H.QueryMessageResponseHeader
    assert H.parse_request_header(RequestCode.HEART_BEAT, {}) is None
    assert H.parse_request_header(RequestCode.GET_MAX_OFFSET, {"topic": "T", "queueId": "1"}) == H.QueueRequestHeader(
        "T", 1
    )


# -- fast path == checked path, on any input -------------------------------------------------------------------------

_values = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.sampled_from(["", "abc", "true", "false", "TRUE", "False", "0", "1", " 7", "1_0", "-", "\x01\x02"]),
    st.text(max_size=8),
)


def _outcome(fn: Any, d: dict[str, str]) -> Any:
    try:
        return ("ok", fn(d))
    except MalformedHeaderError as exc:
        return (type(exc), str(exc))


def _fields(keys: list[str]) -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(st.sampled_from(keys), _values, max_size=len(keys))


SEND_V1_KEYS = list(EXAMPLES[0][0].to_ext_fields())
SEND_V2_KEYS = list("abcdefghijklmn")
PULL_KEYS = list(EXAMPLES[3][0].to_ext_fields())


@given(base=st.sampled_from([{}, EXAMPLES[0][0].to_ext_fields()]), extra=_fields(SEND_V1_KEYS))
@settings(max_examples=300, deadline=None)
def test_send_v1_fast_and_checked_paths_agree(base: dict[str, str], extra: dict[str, str]) -> None:
    d = {**base, **extra}
    fast = _outcome(SendMessageRequestHeader.from_ext_fields, d)
    assert fast == _outcome(SendMessageRequestHeader._from_ext_fields_checked, d)


@given(base=st.sampled_from([{}, EXAMPLES[1][0].to_ext_fields()]), extra=_fields(SEND_V2_KEYS))
@settings(max_examples=300, deadline=None)
def test_send_v2_fast_and_checked_paths_agree(base: dict[str, str], extra: dict[str, str]) -> None:
    d = {**base, **extra}
    checked = _outcome(SendMessageRequestHeaderV2._from_ext_fields_checked, d)
    assert _outcome(SendMessageRequestHeaderV2.from_ext_fields, d) == checked
    v1 = _outcome(SendMessageRequestHeader.from_v2_ext_fields, d)
    assert v1 == (checked if checked[0] != "ok" else ("ok", checked[1].to_v1()))


@given(base=st.sampled_from([{}, EXAMPLES[3][0].to_ext_fields()]), extra=_fields(PULL_KEYS))
@settings(max_examples=300, deadline=None)
def test_pull_fast_and_checked_paths_agree(base: dict[str, str], extra: dict[str, str]) -> None:
    d = {**base, **extra}
    assert _outcome(PullMessageRequestHeader.from_ext_fields, d) == _outcome(
        PullMessageRequestHeader._from_ext_fields_checked, d
    )


@given(extra=_fields(["suggestWhichBrokerId", "nextBeginOffset", "minOffset", "maxOffset"]))
@settings(max_examples=200, deadline=None)
def test_pull_response_fast_and_checked_paths_agree(extra: dict[str, str]) -> None:
    d = {**EXAMPLES[4][0].to_ext_fields(), **extra}
    assert _outcome(PullMessageResponseHeader.from_ext_fields, d) == _outcome(
        PullMessageResponseHeader._from_ext_fields_checked, d
    )


@given(extra=_fields(["msgId", "queueId", "queueOffset", "transactionId", "MSG_REGION", "TRACE_ON"]))
@settings(max_examples=200, deadline=None)
def test_send_response_fast_and_checked_paths_agree(extra: dict[str, str]) -> None:
    d = {**EXAMPLES[2][0].to_ext_fields(), **extra}
    assert _outcome(SendMessageResponseHeader.from_ext_fields, d) == _outcome(
        SendMessageResponseHeader._from_ext_fields_checked, d
    )


@given(
    h=st.builds(
        SendMessageRequestHeader,
        producer_group=st.text(max_size=10),
        topic=st.text(max_size=10),
        default_topic=st.text(max_size=10),
        default_topic_queue_nums=st.integers(0, 1 << 31),
        queue_id=st.integers(-1, 1 << 31),
        sys_flag=st.integers(0, 1 << 31),
        born_timestamp=st.integers(0, 1 << 62),
        flag=st.integers(-(1 << 31), 1 << 31),
        properties=st.none() | st.text(max_size=30),
        reconsume_times=st.none() | st.integers(0, 100),
        unit_mode=st.booleans(),
        batch=st.booleans(),
        max_reconsume_times=st.none() | st.integers(-1, 100),
        broker_name=st.none() | st.text(max_size=10),
    )
)
@settings(max_examples=200, deadline=None)
def test_send_header_round_trips_through_both_wire_forms(h: SendMessageRequestHeader) -> None:
    assert SendMessageRequestHeader.from_ext_fields(h.to_ext_fields()) == h
    assert SendMessageRequestHeader.from_v2_ext_fields(h.to_v2_ext_fields()) == h
    assert SendMessageRequestHeaderV2.from_ext_fields(h.to_v2().to_ext_fields()) == h.to_v2()


def test_generated_constructor_takes_keywords_and_defaults() -> None:
    r = SendMessageResponseHeader(queue_offset=7, msg_id="M", queue_id=1)
    assert (r.msg_id, r.queue_id, r.queue_offset, r.transaction_id, r.msg_region, r.trace_on) == (
        "M", 1, 7, None, "DefaultRegion", True,
    )  # fmt: skip
    assert dataclasses.replace(r, queue_id=2) == SendMessageResponseHeader("M", 2, 7)
    with pytest.raises(TypeError):
        SendMessageResponseHeader("M", 1)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "optional",
    [{}, {"properties": "TAGS\x01t\x02", "reconsume_times": 2, "batch": True, "max_reconsume_times": 16}],
)
def test_send_header_of_builds_what_the_constructor_builds(optional: dict[str, Any]) -> None:
    fixed = ("pg", "T", "TBW102", 4, 3, 8, 1_700_000_000_000, 5)
    names = ("producer_group", "topic", "default_topic", "default_topic_queue_nums", "queue_id", "sys_flag")
    names += ("born_timestamp", "flag")
    fast = SendMessageRequestHeader.of(*fixed, **optional)
    assert fast == SendMessageRequestHeader(**dict(zip(names, fixed, strict=True)), **optional)
    assert fast.to_v2_ext_fields() == fast.to_v2().to_ext_fields()


def test_a_header_class_generates_its_code_on_first_use_in_a_fresh_process() -> None:
    """``@header`` defers ``__init__`` and the readers/writers to the first use; whichever of them comes first, the
    header behaves as declared (a fresh process per entry point, so each one is the first use)."""
    import subprocess
    import sys

    firsts = [
        "h = QueueRequestHeader('T', 3); assert h.to_ext_fields() == {'topic': 'T', 'queueId': '3'}",
        "h = QueueRequestHeader.from_ext_fields({'topic': 'T', 'queueId': '3'}); assert h == QueueRequestHeader('T', 3)",
        "h = QueueRequestHeader._from_ext_fields_checked({'topic': 'T', 'queueId': '3'}); assert h.queue_id == 3",
        "assert QueueRequestHeader(topic='T', queue_id=3)._wire_to_ext_fields()['queueId'] == '3'",
        "import pytest\nwith pytest.raises(MissingHeaderFieldError):\n    QueueRequestHeader.from_ext_fields({'topic': 'T'})",
        "import dataclasses\nassert dataclasses.replace(QueueRequestHeader('T', 3), queue_id=4).queue_id == 4",
    ]
    for first in firsts:
        code = f"from protocol.headers import MissingHeaderFieldError, QueueRequestHeader\n{first}\n"
        subprocess.run([sys.executable, "-c", code], check=True)
