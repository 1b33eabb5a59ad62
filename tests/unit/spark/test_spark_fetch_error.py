"""A look-up that fails after its retries raises FetchError with the cause first (``rocketmq: No route info of this
topic: orders (...)``) and without the client's chained traceback, which Spark would print before the cause."""

from __future__ import annotations

import traceback

import pytest

from client import RouteNotFoundError
from spark_connector import _client


def test_the_cause_leads_and_is_not_chained() -> None:
    calls: list[int] = []

    def look_up() -> None:
        calls.append(1)
        raise RouteNotFoundError("No route info of this topic: orders")

    with pytest.raises(_client.FetchError) as info:
        _client.with_retries("route and offset look-up", [0.0, 0.0], look_up)
    assert len(calls) == 3
    assert str(info.value) == (
        "rocketmq: No route info of this topic: orders (route and offset look-up failed after 2 retries;"
        " RouteNotFoundError)"
    )
    text = "".join(traceback.format_exception(info.value))
    assert "RouteNotFoundError:" not in text and "During handling" not in text and "direct cause" not in text
    assert text.splitlines()[-1] == f"spark_connector._client.FetchError: {info.value}"
