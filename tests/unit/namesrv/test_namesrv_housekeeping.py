"""BrokerHousekeeping without sockets: fake channels, a fake clock, one scan round at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from namesrv.config import LiveConfig, load_config
from namesrv.housekeeping import BrokerHousekeeping
from namesrv.route_table import DataVersion, RouteTable, TopicConfig
from protocol.remoting import Channel


class FakeChannel:
    def __init__(self, conn_id: int) -> None:
        self.conn_id = conn_id
        self.peer = f"10.0.0.{conn_id}:5000"
        self.closed = False
        self.callbacks: list[Callable[[Any], None]] = []

    def add_close_callback(self, cb: Callable[[Any], None]) -> None:
        self.callbacks.append(cb)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for cb in self.callbacks:
                cb(self)


def setup() -> tuple[list[int], RouteTable, BrokerHousekeeping]:
    now = [0]
    routes = RouteTable(lambda: now[0])
    hk = BrokerHousekeeping(routes, LiveConfig(load_config(None, {"brokerChannelExpiredTime": 1000})))
    return now, routes, hk


def register(routes: RouteTable, hk: BrokerHousekeeping, ch: FakeChannel, addr: str, name: str) -> None:
    routes.register(
        "c",
        addr,
        name,
        0,
        "",
        DataVersion(timestamp=1, counter=1),
        {name: TopicConfig(topic_name=name)},
        channel_id=ch.conn_id,
    )
    hk.watch(cast(Channel, ch))  # the part of Channel housekeeping uses


def test_watch_hooks_each_channel_once_and_drops_on_close() -> None:
    _now, routes, hk = setup()
    ch = FakeChannel(1)
    register(routes, hk, ch, "a:1", "ta")
    register(routes, hk, ch, "a:1", "ta")
    assert len(ch.callbacks) == 1
    ch.close()
    assert routes.route("ta") is None


def test_scan_expires_and_closes_the_channel() -> None:
    now, routes, hk = setup()
    ch = FakeChannel(1)
    register(routes, hk, ch, "a:1", "ta")
    now[0] = 1000
    assert hk.scan() == []
    now[0] = 1001
    assert hk.scan() == ["a:1"]
    assert ch.closed and routes.route("ta") is None


def test_scan_keeps_a_channel_another_live_broker_uses() -> None:
    now, routes, hk = setup()
    ch = FakeChannel(1)
    register(routes, hk, ch, "a:1", "ta")
    now[0] = 900
    register(routes, hk, ch, "b:1", "tb")  # a second broker over the same connection, fresher
    now[0] = 1500
    assert hk.scan() == ["a:1"]
    assert not ch.closed and routes.route("tb") is not None
