"""SQL92 subscriptions of the official Java clients against Apache RocketMQ 5.5.0 and rocketq: Java 4.x
``MessageSelector.bySql`` (remoting pulls, ``CHECK_CLIENT_CONFIG`` at start) and Java 5.x ``FilterExpression(...,
SQL92)`` (gRPC receives), with ``enablePropertyFilter=true`` (``filter_targets``) and with the default ``false``
(``targets``). Each message carries the user property ``a`` = its index; the same deliveries and the same errors on
both clusters."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.reference.compare import assert_same, errors, messages
from tests.reference.conftest import Target
from tests.reference.peers import Driver
from tests.reference.test_java4_client import create, ok, on_both
from tests.reference.test_java5_client import view

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]

# which of the 10 messages (a = 0..9, tags TagA, TagB, TagC cycled) each selector takes
SELECTORS = {
    "a BETWEEN 3 AND 5": ["3", "4", "5"],
    "(a < 2 OR TAGS = 'TagC') AND a IS NOT NULL": ["0", "1", "2", "5", "8"],
    "a IN ('7', '9') OR b = 'x'": ["7", "9"],  # IN compares the property's text; b is absent (unknown)
    "NOT (a >= 1)": ["0"],
}
SETTLE_MS = 3000  # after the expected ones, how long a consumer keeps listening for one that should not come
BAD = "a >> 3"


_REQUEST_ID = re.compile(r"request-id=[0-9a-f-]+, ")  # the 5.x client's per-call id in an error's message


def _seqs(events: list[dict[str, Any]]) -> list[str]:
    return sorted(e["props"]["a"] for e in events if e["event"] == "msg")


def _error_view(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The errors; a parse error's remark up to JavaCC's "Was expecting" list, which rocketq does not reproduce
    (docs/reference-differences.md)."""
    return [
        (e["event"], e.get("type"), e.get("code"), _REQUEST_ID.sub("", e.get("remark", "")).split("\nWas expecting")[0])
        for e in errors(events)
    ]


def test_java4_sql92_selectors(java4: Driver, filter_targets: dict[str, Target]) -> None:
    """A push consumer per selector from the first offset: exactly the matching messages arrive."""

    def run(t: Target) -> Any:
        create(java4, t, "RefSql")
        ok(java4.run(cmd="send", ns=t.ns_addr, topic="RefSql", group="RefP", count=10, props={"a": "{i}"}))
        out = {}
        for n, (expr, want) in enumerate(SELECTORS.items()):
            got = java4.run(
                cmd="consume",
                ns=t.ns_addr,
                topic="RefSql",
                group=f"RefSqlC{n}",
                sql=expr,
                expect=len(want),
                settleMs=SETTLE_MS,
            )
            out[expr] = {"got": messages(ok(got), t.name), "a": _seqs(got)}
        return out

    seen = on_both(filter_targets, run)
    assert {expr: v["a"] for expr, v in seen["apache"].items()} == {
        expr: sorted(want, key=str) for expr, want in SELECTORS.items()
    }
    assert_same(seen)


def test_java4_sql92_errors(java4: Driver, filter_targets: dict[str, Target], targets: dict[str, Target]) -> None:
    """A selector that does not parse fails the consumer's start (CHECK_CLIENT_CONFIG); with enablePropertyFilter
    off every SQL92 subscription does."""

    def bad(t: Target) -> Any:
        create(java4, t, "RefSqlBad")
        return _error_view(java4.run(cmd="consume", ns=t.ns_addr, topic="RefSqlBad", group="RefSqlBadC", sql=BAD))

    def disabled(t: Target) -> Any:
        create(java4, t, "RefSqlOff")
        got = java4.run(cmd="consume", ns=t.ns_addr, topic="RefSqlOff", group="RefSqlOffC", sql="a > 1")
        return _error_view(got)

    seen = {"bad": on_both(filter_targets, bad), "disabled": on_both(targets, disabled)}
    assert seen["bad"]["apache"] and seen["bad"]["apache"][0][1] == "MQClientException"
    assert seen["disabled"]["apache"] and seen["disabled"]["apache"][0][1] == "MQClientException"
    assert_same({name: {k: seen[k][name] for k in seen} for name in ("apache", "rocketq")})


def test_java5_sql92_selectors(java4: Driver, java5: Driver, filter_targets: dict[str, Target]) -> None:
    """A 5.x simple consumer per selector (FilterExpressionType.SQL92): exactly the matching messages arrive."""

    def run(t: Target) -> Any:
        create(java4, t, "Ref5Sql")
        ok(java5.run(cmd="send", endpoint=t.grpc_endpoint, topic="Ref5Sql", count=10, props={"a": "{i}"}))
        out = {}
        for n, (expr, want) in enumerate(SELECTORS.items()):
            got = java5.run(
                cmd="simple",
                endpoint=t.grpc_endpoint,
                topic="Ref5Sql",
                group=f"Ref5SqlC{n}",
                expr=expr,
                exprType="SQL92",
                expect=len(want),
                settleMs=SETTLE_MS,
            )
            out[expr] = {"got": view(got), "a": _seqs(got), "errors": _error_view(got)}
        return out

    seen = on_both(filter_targets, run)
    assert {expr: v["a"] for expr, v in seen["apache"].items()} == {
        expr: sorted(want, key=str) for expr, want in SELECTORS.items()
    }
    assert_same(seen)


def test_java5_sql92_errors(
    java4: Driver, java5: Driver, filter_targets: dict[str, Target], targets: dict[str, Target]
) -> None:
    """A bad selector, and a SQL92 subscription with enablePropertyFilter off: what the 5.x client reports."""

    def attempt(t: Target, topic: str, expr: str) -> Any:
        create(java4, t, topic)
        got = java5.run(
            cmd="simple",
            endpoint=t.grpc_endpoint,
            topic=topic,
            group=f"{topic}C",
            expr=expr,
            exprType="SQL92",
            expect=1,
            timeoutMs=5000,
        )
        return {"got": view(got), "errors": _error_view(got)}

    seen = {
        "bad": on_both(filter_targets, lambda t: attempt(t, "Ref5SqlBad", BAD)),
        "disabled": on_both(targets, lambda t: attempt(t, "Ref5SqlOff", "a > 1")),
    }
    assert_same({name: {k: seen[k][name] for k in seen} for name in ("apache", "rocketq")})
