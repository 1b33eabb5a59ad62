"""protocol.rules (names, permissions) and the small vocabulary helpers that replaced hand-written copies:
SEND_V2_AS_V1, SubscriptionData.of_tags, BrokerData's address choice."""

from __future__ import annotations

import pytest

from protocol import rules
from protocol.bodies import BrokerData, SubscriptionData
from protocol.headers import SEND_V2_AS_V1, MissingHeaderFieldError, SendMessageRequestHeader
from protocol.message_properties import tag_hash


@pytest.mark.parametrize(
    ("name", "limit", "ok"),
    [
        ("TopicTest", 255, True),
        ("%RETRY%CID-a_b|c", 255, True),
        ("", 255, False),
        ("bad name", 255, False),
        ("T" * 127, rules.TOPIC_MAX_LENGTH, True),
        ("T" * 128, rules.TOPIC_MAX_LENGTH, False),
        ("G" * 256, 255, False),
    ],
)
def test_is_valid_name(name: str, limit: int, ok: bool) -> None:
    assert rules.is_valid_name(name, limit) is ok


def test_topic_rules_and_permissions() -> None:
    assert rules.topic_error("TopicTest") is None
    assert rules.topic_error(" ") == "The specified topic is blank."
    assert "illegal characters" in (rules.topic_error("a b") or "")
    assert rules.retry_topic("g") == "%RETRY%g" and rules.dlq_topic("g") == "%DLQ%g"
    assert rules.AUTO_CREATE_TOPIC == "TBW102" and rules.AUTO_CREATE_TOPIC in rules.SYSTEM_TOPIC_SET
    assert rules.perm_to_string(rules.PERM_RW) == "RW-" and rules.perm_to_string(rules.PERM_INHERIT) == "--X"
    assert rules.is_readable(4) and not rules.is_writeable(4) and rules.is_inherited(7)


def test_send_v2_reads_straight_into_the_v1_header() -> None:
    h = SendMessageRequestHeader("PID", "T", "TBW102", 4, 1, 0, 17, 0, "a\x01b", 2, True, False, 16, "bk")
    assert SEND_V2_AS_V1.from_ext_fields(h.to_v2_ext_fields()) == h
    wire = h.to_v2_ext_fields()
    del wire["b"]
    with pytest.raises(MissingHeaderFieldError, match="<b> is null"):
        SEND_V2_AS_V1.from_ext_fields(wire)


def test_subscription_of_tags_sorts_and_hashes() -> None:
    s = SubscriptionData.of_tags("T", "b || a", {"b", "a"}, sub_version=5)
    assert s.tags_set == ["a", "b"] and s.code_set == [tag_hash("a"), tag_hash("b")]
    assert s.to_json()["subString"] == "b || a" and s.sub_version == 5


def test_broker_data_address_choice() -> None:
    bd = BrokerData(cluster="C", broker_name="b", broker_addrs={0: "m", 1: "s1", 2: "s2"})
    assert bd.any_addr() == "m" and bd.master_addr == "m"
    assert bd.find_in_subscribe(1) == ("s1", 1)
    assert bd.find_in_subscribe(5) == ("m", 0)
    slaves = BrokerData(cluster="C", broker_name="b", broker_addrs={2: "s2"})
    assert slaves.any_addr() == "s2" and slaves.find_in_subscribe(1) == ("s2", 2)
    assert BrokerData(broker_name="b").find_in_subscribe(0) is None
