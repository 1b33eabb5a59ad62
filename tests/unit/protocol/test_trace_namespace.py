"""The trace-record codec (``protocol.trace``) against bodies the Java 4.9.8 client wrote (captured from its
``enableMsgTrace`` producer and consumer against rocketq), and the namespace rules (``protocol.namespace``) against
J ``NamespaceUtil``'s documented cases."""

from __future__ import annotations

import pytest

from protocol import namespace as ns
from protocol.trace import TraceRecord, TraceType, decode_records, encode_record, encode_records, trace_keys

MSG_ID = "FD00000000000000000000000000000243C030946E098B0CE5D10000"
REQ_ID = "FD00000000000000000000000000000243C030946E098B0CE6930002"
# Java 4.9.8 ``DefaultMQProducer("PG_java_trace", true)``: one Pub
JAVA_PUB = (
    f"Pub\x011795824078289\x01DefaultRegion\x01PG_java_trace\x01TopicJT\x01{MSG_ID}\x01TagJ\x01jkey1 jkey2\x01"
    "127.0.0.1:39633\x019\x0116\x010\x017F00000100009AD100000000000018D3\x01true\x02"
)
# Java 4.9.8 ``DefaultMQPushConsumer("CG_java_trace", true)``: SubBefore + SubAfter in one trace message
JAVA_SUB = (
    f"SubBefore\x011795824078483\x01null\x01CG_java_trace\x01{REQ_ID}\x01{MSG_ID}\x010\x01jkey1 jkey2\x02"
    f"SubAfter\x01{REQ_ID}\x01{MSG_ID}\x010\x01true\x01jkey1 jkey2\x010\x011795824078483\x01CG_java_trace\x02"
)


def test_decodes_the_java_clients_records() -> None:
    (pub,) = decode_records(JAVA_PUB)
    assert pub == TraceRecord(
        TraceType.PUB, MSG_ID, 1795824078289, "DefaultRegion", "PG_java_trace", "TopicJT", "TagJ", "jkey1 jkey2",
        "127.0.0.1:39633", 9, 16, 0, "7F00000100009AD100000000000018D3", True,
    )  # fmt: skip
    before, after = decode_records(JAVA_SUB)
    assert (before.type, before.region_id, before.group, before.request_id) == (
        TraceType.SUB_BEFORE, None, "CG_java_trace", REQ_ID,
    )  # fmt: skip
    assert (after.type, after.cost_time, after.success, after.context_code, after.timestamp, after.group) == (
        TraceType.SUB_AFTER, 0, True, 0, 1795824078483, "CG_java_trace",
    )  # fmt: skip


def test_encodes_byte_for_byte_as_java() -> None:
    assert encode_records(decode_records(JAVA_PUB)) == JAVA_PUB
    assert encode_records(decode_records(JAVA_SUB)) == JAVA_SUB
    assert trace_keys(decode_records(JAVA_SUB)) == [MSG_ID, "jkey1", "jkey2"]


def test_old_and_short_forms_and_garbage() -> None:
    # 13-field Pub (no offsetMsgId), 15-field Pub (clientHost), 6-field SubAfter (CLOUD channel)
    old = "Pub\x011\x01R\x01G\x01T\x01ID\x01null\x01null\x01h:1\x010\x012\x010\x01false\x02"
    (r,) = decode_records(old)
    assert r.offset_msg_id is None and r.success is False and r.tags is None
    new = "Pub\x011\x01R\x01G\x01T\x01ID\x01t\x01k\x01h:1\x010\x012\x010\x01OFF\x01true\x01client:1\x02"
    assert decode_records(new)[0].client_host == "client:1"
    cloud = "SubAfter\x01REQ\x01ID\x013\x01false\x01k\x02"
    (c,) = decode_records(cloud)
    assert (c.msg_id, c.cost_time, c.success, c.group) == ("ID", 3, False, "")
    assert decode_records("Pub\x01notanumber\x02Nope\x01x\x02\x02") == []
    assert encode_record(TraceRecord(TraceType.SUB_BEFORE, "ID", 5, None, "G", request_id="R")).startswith(
        "SubBefore\x015\x01null\x01G\x01R\x01ID\x010\x01null\x02"
    )


@pytest.mark.parametrize(
    ("namespace", "name", "wrapped"),
    [
        ("ns", "TopicA", "ns%TopicA"),
        ("ns", "%RETRY%GID", "%RETRY%ns%GID"),
        ("ns", "%DLQ%GID", "%DLQ%ns%GID"),
        ("ns", "ns%TopicA", "ns%TopicA"),
        ("ns", "%RETRY%ns%GID", "%RETRY%ns%GID"),
        ("ns", "TBW102", "TBW102"),
        ("ns", "RMQ_SYS_TRACE_TOPIC", "RMQ_SYS_TRACE_TOPIC"),
        ("ns", "rmq_sys_anything", "rmq_sys_anything"),
        ("ns", "CID_RMQ_SYS_TRANS", "CID_RMQ_SYS_TRANS"),
        ("", "TopicA", "TopicA"),
        (None, "TopicA", "TopicA"),
    ],
)
def test_wrap(namespace: str | None, name: str, wrapped: str) -> None:
    assert ns.wrap(namespace, name) == wrapped


def test_unwrap_and_namespace_of() -> None:
    assert ns.unwrap("ns%TopicA") == "TopicA"
    assert ns.unwrap("%RETRY%ns%GID") == "%RETRY%GID"
    assert ns.unwrap("%DLQ%ns%GID") == "%DLQ%GID"
    assert ns.unwrap("TopicA") == "TopicA"
    assert ns.unwrap("ns%TopicA", "ns") == "TopicA"
    assert ns.unwrap("other%TopicA", "ns") == "other%TopicA"
    assert ns.unwrap("%RETRY%other%GID", "ns") == "%RETRY%other%GID"
    assert ns.unwrap("RMQ_SYS_TRACE_TOPIC") == "RMQ_SYS_TRACE_TOPIC"
    assert ns.namespace_of("%DLQ%ns%GID") == "ns" and ns.namespace_of("TopicA") == ""
    assert ns.wrap_retry("ns", "GID") == "%RETRY%ns%GID"
