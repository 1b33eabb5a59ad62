"""broker.proxy.auth against the official 5.x Python client's own signing code (rocketmq-python-client 5.1.2)."""

from __future__ import annotations

import time

import pytest

from broker.proxy import auth


def _metadata(ak: str, sk: str) -> dict[str, str]:
    from rocketmq.v5.client import ClientConfiguration, Credentials
    from rocketmq.v5.util.signature import Signature

    cfg = ClientConfiguration("127.0.0.1:8081", Credentials(ak, sk))
    return dict(Signature.metadata(cfg, "host@1@0@x"))


def test_the_python_clients_header_verifies() -> None:
    md = _metadata("AK1", "secret-1")
    secrets = {"AK1": "secret-1"}
    assert auth.verify(md["authorization"], md["x-mq-date-time"], secrets.get) == "AK1"


def test_uppercase_hex_as_node_sends_verifies() -> None:
    now = time.strftime(auth.DATE_FORMAT, time.gmtime())
    sig = auth.sign("s", now).upper()
    header = f"MQv2-HMAC-SHA1 Credential=AK/x, SignedHeaders=x-mq-date-time, Signature={sig}"
    assert auth.verify(header, now, {"AK": "s"}.get) == "AK"


@pytest.mark.parametrize(
    ("date", "reason"),
    [("20230101T000000Z", "older than 15 minutes"), ("20990101T000000Z", "in the future"), ("yesterday", "not yyyy")],
)
def test_a_correctly_signed_stale_or_future_date_is_refused_as_a_replay(date: str, reason: str) -> None:
    sig = auth.sign("s", date)
    header = f"MQv2-HMAC-SHA1 Credential=AK, SignedHeaders=x-mq-date-time, Signature={sig}"
    with pytest.raises(auth.AuthError, match=reason):
        auth.verify(header, date, {"AK": "s"}.get)


def test_the_window_is_fifteen_minutes_back_and_a_minute_ahead() -> None:
    now = 1_800_000_000.0
    at = time.strftime(auth.DATE_FORMAT, time.gmtime(now))
    auth.check_fresh(at, now + 15 * 60 - 1)
    auth.check_fresh(at, now - 59)
    with pytest.raises(auth.AuthError):
        auth.check_fresh(at, now + 15 * 60 + 1)
    with pytest.raises(auth.AuthError):
        auth.check_fresh(at, now - 61)


@pytest.mark.parametrize(
    ("secrets", "date", "reason"),
    [
        ({"AK1": "other"}, None, "signature mismatch"),
        ({}, None, "no account"),
        ({"AK1": "secret-1"}, "20200101T000000Z", "signature mismatch"),
    ],
)
def test_refused(secrets: dict[str, str], date: str | None, reason: str) -> None:
    md = _metadata("AK1", "secret-1")
    with pytest.raises(auth.AuthError, match=reason):
        auth.verify(md["authorization"], date or md["x-mq-date-time"], secrets.get)


def test_missing_header_is_refused() -> None:
    with pytest.raises(auth.AuthError, match="required"):
        auth.verify(None, "20261123T200000Z", {}.get)
