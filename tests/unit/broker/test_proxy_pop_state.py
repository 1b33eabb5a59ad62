"""broker.proxy.pop_state (pure POP state) and broker.proxy.convert (v2 ↔ stored message), sans IO."""

from __future__ import annotations

import hashlib

import pytest

from broker.proxy import convert
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pop_state import HandleStatus, PopState, parse_handle
from protocol.message_ext import MessageExt

LIMITS = convert.Limits(4 << 20, 128, 16384, 64, 86_400_000)


def _add(st: PopState, qoff: int, *, qid: int = 0, fifo: bool = False, now: int = 1000) -> int:
    return st.add("G", "T", qid, qoff, 100 + qoff, 50, f"id{qoff}", now_ms=now, invisible_ms=10_000, fifo=fifo).id


def test_ack_by_newest_handle_only() -> None:
    st = PopState()
    _add(st, 0)
    e = next(iter(st.inflight[("G", "T")].values()))
    old = e.handle
    status, _ = st.change_invisible("G", "T", old, 2000, 30_000)
    assert status is HandleStatus.OK
    assert st.ack("G", "T", old, 2001)[0] is HandleStatus.EXPIRED  # superseded
    assert st.ack("G", "T", e.handle, 2001)[0] is HandleStatus.OK
    assert st.ack("G", "T", e.handle, 2002)[0] is HandleStatus.EXPIRED  # acked already
    assert st.ack("G", "T", "nonsense", 2002)[0] is HandleStatus.INVALID
    assert st.count("G") == 0


def test_expiry_redelivery_counts_attempts() -> None:
    st = PopState()
    _add(st, 0)
    _add(st, 1)
    assert st.due("G", "T", 10_999) == []
    due = st.due("G", "T", 11_000)
    assert [e.queue_offset for e in due] == [0, 1]
    h = due[0].handle
    assert st.ack("G", "T", h, 11_000)[0] is HandleStatus.EXPIRED  # past its deadline
    st.redeliver(due[0], 11_000, 10_000)
    assert due[0].attempt == 2 and st.ack("G", "T", due[0].handle, 12_000)[0] is HandleStatus.OK


def test_fifo_locks_a_queue_until_acked() -> None:
    st = PopState()
    _add(st, 0, qid=1, fifo=True)
    _add(st, 0, qid=2)
    assert st.locked_queues("G", "T") == {1}


def test_json_round_trip_keeps_handles_valid() -> None:
    st = PopState()
    st.set_offset("G", "T", 0, 7)
    _add(st, 3)
    e = next(iter(st.inflight[("G", "T")].values()))
    back = PopState.from_json(st.to_json())
    assert back.offset("G", "T", 0) == 7 and back.next_id == st.next_id
    assert back.ack("G", "T", e.handle, 2000)[0] is HandleStatus.OK
    assert parse_handle(e.handle) == (e.id, e.gen, e.deadline_ms)


def _v2(body: bytes = b"hello", **sp: object) -> pb.Message:
    m = pb.Message(body=body)
    m.topic.name = "T"
    m.system_properties.message_id = "01AB"
    for k, v in sp.items():
        setattr(m.system_properties, k, v)
    return m


def test_from_v2_maps_system_properties() -> None:
    m = _v2(tag="TagA", message_group="g1")
    m.system_properties.keys.extend(["k1", "k2"])
    m.user_properties["a"] = "b"
    out = convert.from_v2(m, LIMITS, 1000)
    assert out.properties == {"a": "b", "UNIQ_KEY": "01AB", "TAGS": "TagA", "KEYS": "k1 k2", "__SHARDINGKEY": "g1"}
    assert out.message_group == "g1" and not out.transactional


@pytest.mark.parametrize(
    ("message", "code"),
    [
        (_v2(b""), pb.Code.MESSAGE_BODY_EMPTY),
        (_v2(b"x" * ((4 << 20) + 1)), pb.Code.MESSAGE_BODY_TOO_LARGE),
        (_v2(tag="a|b"), pb.Code.ILLEGAL_MESSAGE_TAG),
        (_v2(message_group="g" * 64), pb.Code.ILLEGAL_MESSAGE_GROUP),
    ],
)
def test_from_v2_refuses(message: pb.Message, code: int) -> None:
    with pytest.raises(convert.InvalidMessage) as info:
        convert.from_v2(message, LIMITS, 1000)
    assert info.value.code == code


def test_to_v2_digest_is_uppercase_md5_and_user_properties_exclude_reserved() -> None:
    ext = MessageExt(topic="T", body=b"body", properties={"UNIQ_KEY": "01X", "TAGS": "t", "mine": "1"})
    out = convert.to_v2(ext, receipt_handle="1_1_0_5", attempt=2)
    assert out.system_properties.body_digest.checksum == hashlib.md5(b"body").hexdigest().upper()
    assert dict(out.user_properties) == {"mine": "1"}
    assert out.system_properties.message_id == "01X" and out.system_properties.delivery_attempt == 2
    assert out.system_properties.message_type == pb.MessageType.NORMAL


def test_renew_extends_only_live_clients_and_a_nack_ends_it() -> None:
    st = PopState()
    a = st.add("G", "T", 0, 0, 100, 50, "a", now_ms=0, invisible_ms=10_000, renew_client="c1")
    b = st.add("G", "T", 0, 1, 150, 50, "b", now_ms=0, invisible_ms=10_000, renew_client="gone")
    handle = a.handle
    assert st.renew(9_000, 2_000, 10_000, 3_600_000, lambda c: c == "c1") == 2
    assert a.deadline_ms == 19_000 and b.deadline_ms == 10_000 and not b.renew_client
    assert st.find("G", "T", handle, 15_000)[0] is HandleStatus.OK  # the handle survives renewal
    st.change_invisible("G", "T", handle, 15_000, 1_000)
    assert not a.renew_client and st.renew(15_500, 2_000, 10_000, 3_600_000, lambda c: True) == 0
