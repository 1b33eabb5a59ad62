"""Tag subscriptions: expression parsing and the two filter stages (hash, then exact tag string)."""

from __future__ import annotations

import pytest

from broker.filter import SubscriptionParseError, build_subscription, make_filter, parse_tags
from protocol.message_properties import tag_hash


def test_parse_tags() -> None:
    assert parse_tags("*") == frozenset() == parse_tags("") == parse_tags(None)
    assert parse_tags(" TagA || TagB ||") == {"TagA", "TagB"}
    with pytest.raises(SubscriptionParseError):
        parse_tags("||")


def test_filter_ignores_client_codes_and_checks_strings() -> None:
    sub = build_subscription("T", "TagA || TagB", 7)
    assert sub.codes == {tag_hash("TagA"), tag_hash("TagB")} and sub.sub_version == 7
    f = make_filter(sub)
    assert f is not None and f.match_code is not None and f.match_tags is not None and f.match_record is None
    assert f.match_code(tag_hash("TagA")) and not f.match_code(0)
    assert f.match_tags("TagB") and not f.match_tags("TagC") and not f.match_tags(None)
    assert make_filter(build_subscription("T", "*")) is None
    with pytest.raises(SubscriptionParseError):
        build_subscription("T", "a >", expression_type="SQL92")
    with pytest.raises(SubscriptionParseError):
        build_subscription("T", "a > 1", expression_type="CLASS")
