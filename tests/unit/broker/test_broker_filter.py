"""Tag subscriptions: expression parsing and the two filter stages (hash, then exact tag string); SQL92 filters:
the record matcher over raw properties bytes and the TAGS pre-filter on the consume queue's hash."""

from __future__ import annotations

import pytest

from broker.filter import SubscriptionParseError, build_subscription, compile_sql, parse_tags
from broker.sql92.record import record_matcher
from protocol.message_properties import tag_hash
from protocol.record import encode_record


def test_parse_tags() -> None:
    assert parse_tags("*") == frozenset() == parse_tags("") == parse_tags(None)
    assert parse_tags(" TagA || TagB ||") == {"TagA", "TagB"}
    with pytest.raises(SubscriptionParseError):
        parse_tags("||")


def test_filter_ignores_client_codes_and_checks_strings() -> None:
    sub = build_subscription("T", "TagA || TagB", 7)
    assert sub.codes == {tag_hash("TagA"), tag_hash("TagB")} and sub.sub_version == 7
    f = sub.filter
    assert f is not None and f.match_code is not None and f.match_tags is not None and f.match_record is None
    assert f.match_code(tag_hash("TagA")) and not f.match_code(0)
    assert f.match_tags("TagB") and not f.match_tags("TagC") and not f.match_tags(None)
    assert build_subscription("T", "*").filter is None
    with pytest.raises(SubscriptionParseError):
        build_subscription("T", "a >", expression_type="SQL92")
    with pytest.raises(SubscriptionParseError):
        build_subscription("T", "a > 1", expression_type="CLASS")


RECORD_PROPS = {"a": "12", "TAGS": "TagA", "b": "x\u00e9", "UNIQ_KEY": "K", "pa": "9"}
RECORD_EXPRESSIONS = [
    "a BETWEEN 10 AND 14",
    "a NOT BETWEEN 10 AND 14",
    "b = 'x\u00e9' AND TAGS IN ('TagA', 'TagB')",
    "a = 9",  # 'pa' ends in 'a': only a whole name matches
    "missing IS NULL AND a > 1",
    "b > 1",  # a failed conversion: no match
    "TAGS = 'TagB' OR pa = 9",
]


@pytest.mark.parametrize("v6", [False, True])
@pytest.mark.parametrize("expr", RECORD_EXPRESSIONS)
def test_record_matcher_agrees_with_the_decoded_properties(expr: str, v6: bool) -> None:
    """The raw-bytes lookup gives the selector what the decoded properties would, whatever the hosts' form."""
    host = ("::1", 5000) if v6 else ("127.0.0.1", 5000)
    rec = encode_record(topic="T", body=b"body", properties=RECORD_PROPS, born_host=host, store_host=host)
    f = build_subscription("T", expr, expression_type="SQL92").filter
    assert f is not None and f.match_record is not None
    assert f.match_record(memoryview(bytes(rec))) is compile_sql(expr).matches(RECORD_PROPS.get)


def test_record_matcher_takes_the_last_of_a_repeated_name_and_refuses_garbage() -> None:
    props = "a\x011\x02b\x02a\x017\x02"  # 'a' twice (the last wins) and a piece without a value
    rec = memoryview(bytes(encode_record(topic="T", body=b"", properties=props)))
    assert record_matcher(compile_sql("a = 7"))(rec)
    assert not record_matcher(compile_sql("a = 1"))(rec)
    assert not record_matcher(compile_sql("a = 7"))(memoryview(b"\x00\x00\x00\x08garbage!"))


@pytest.mark.parametrize(
    ("expr", "tags"),
    [
        ("TAGS = 'TagA'", {"TagA"}),
        ("TAGS IN ('TagA', 'TagB') AND a > 1", {"TagA", "TagB"}),
        ("a > 1 AND (TAGS = 'TagA' OR TAGS = 'TagC')", {"TagA", "TagC"}),
        ("(TAGS = 'A' OR TAGS = 'B') AND (TAGS = 'B' OR TAGS = 'C')", {"B"}),
        ("TAGS = 'TagA' OR a > 1", None),  # TRUE without TAGS: no pre-filter
        ("NOT TAGS = 'TagA'", None),
        ("TAGS NOT IN ('TagA')", None),
        ("TAGS <> 'TagA'", None),
        ("a > 1", None),
    ],
)
def test_sql_tag_prefilter(expr: str, tags: set[str] | None) -> None:
    """When every way to TRUE needs a TAGS from a set, the consume queue's tag hash skips the other units."""
    f = build_subscription("T", expr, expression_type="SQL92").filter
    assert f is not None
    if tags is None:
        assert f.match_code is None
    else:
        assert f.match_code is not None
        assert all(f.match_code(tag_hash(t)) for t in tags)
        assert not f.match_code(tag_hash("Other")) and not f.match_code(0)


@pytest.mark.parametrize("expr", RECORD_EXPRESSIONS)
def test_dispatch_verdict_agrees_with_the_record_matcher(expr: str) -> None:
    """What dispatch judges from the properties string (or a dict) is what a read would from the stored record: the
    store serves reads from the kept verdict."""
    f = build_subscription("T", expr, expression_type="SQL92").filter
    assert f is not None and f.match_record is not None and f.marks is not None
    assert f.marks.key == f"SQL92:{expr}"
    for props in (RECORD_PROPS, "a\x011\x02b\x02a\x017\x02TAGS\x01TagB\x02", {"a": "x"}):
        rec = memoryview(bytes(encode_record(topic="T", body=b"", properties=props)))
        text = props if isinstance(props, str) else "".join(f"{k}\x01{v}\x02" for k, v in props.items())
        assert f.marks.test(text) is f.match_record(rec)
        assert f.marks.test((text, None, None, None)) is f.match_record(rec)
        if isinstance(props, dict):
            assert f.marks.test(props) is f.match_record(rec)
    assert build_subscription("T", "TagA").filter.marks is None  # type: ignore[union-attr]
