"""The official RocketMQ 5.x Python client (gRPC) with SQL92 filters: a SimpleConsumer whose FilterExpression is SQL
receives exactly the messages whose properties match (``seq`` and the ``TAGS`` pseudo-property), and a filter that
does not compile is refused at receive as Apache RocketMQ's proxy does (50001, "parse the consumer's subscription
failed"). Processes and waits as in test_grpc_client."""

from __future__ import annotations

import pytest

from tests.compat.driver_events import events
from tests.compat.grpc_support import Env, create_group, create_topic, msgs, produce
from tests.compat.grpc_support import start_consumer as start

pytestmark = pytest.mark.compat


def test_simple_consumer_with_sql_filter(env: Env) -> None:
    topic, group = "G5Sql", "GID_g5_sql"
    create_topic(env, topic, 2)
    create_group(env, group)
    # seq i has tag TagA/TagB/TagC for i % 3 = 0/1/2: 10..14 without TagB = 11, 12, 14
    c = start(env, "simple", topic, group, "--count", "3", "--sql", "seq BETWEEN 10 AND 14 AND TAGS <> 'TagB'")
    try:
        produce(env, topic, 30, "s")
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 120)
    finally:
        c.stop()
    got = sorted(int(m["props"]["seq"]) for m in msgs(evs))
    assert got == [11, 12, 14]


def test_sql_filter_that_does_not_compile_is_refused(env: Env) -> None:
    topic, group = "G5SqlBad", "GID_g5_sql_bad"
    create_topic(env, topic, 1)
    create_group(env, group)
    c = env.driver("simple", "--topic", topic, "--group", group, "--sql", "seq >", "--deadline", "10", name="sql-bad")
    try:
        evs = events(c, lambda ev, _s: ev["event"] == "stopped", 60)
    finally:
        c.stop()
    failures = [e for e in evs if e["event"] in ("startup_failed", "receive_failed")]
    assert failures and "50001" in failures[0]["error"], evs
    assert "parse the consumer's subscription failed" in failures[0]["error"], evs
