"""The fast ("VIP channel") port as Apache RocketMQ opens it: a second listener on listenPort - 2 (``fastListenPort``)
serving the same requests, which clients (the Dashboard's default ``isVIPChannel``) find by subtracting 2 from the
broker address the name server gives them."""

from __future__ import annotations

from pathlib import Path

from broker.config import load_config
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import heartbeat_cmd, messages, pull, send
from tests.servers import free_port_pair


def test_fast_port_defaults_to_listen_port_minus_two() -> None:
    assert load_config(None, {"listenPort": 10911}).fast_listen_port == 10909
    assert load_config(None, {"listenPort": 20000, "fastListenPort": 30000}).fast_listen_port == 30000
    assert load_config(None, {"listenPort": 10911, "fastListenPort": -1}).fast_listen_port is None
    assert load_config(None, {"listenPort": 0}).fast_listen_port == 0  # any free port


async def test_fast_port_serves_the_same_requests(tmp_path: Path) -> None:
    port = free_port_pair()
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, listenPort=port) as broker:
        assert broker.fast_port == port - 2
        fast = f"127.0.0.1:{port - 2}"
        client = RemotingClient()
        try:
            assert (await send(client, fast, "FastT", b"via-vip")).code == ResponseCode.SUCCESS
            assert (await client.invoke(fast, heartbeat_cmd("cid", "G", "FastT"))).code == ResponseCode.SUCCESS
            cmd = RemotingCommand.request(RequestCode.GET_TOPIC_CONFIG, {"topic": "FastT"})
            assert (await client.invoke(fast, cmd)).code == ResponseCode.SUCCESS
            got = await pull(client, broker.addr, "G", "FastT", 0, 0, suspend_ms=0)  # the send went to queue 0
            found = [m.body for m in messages(got)]
            assert found == [b"via-vip"]
        finally:
            await client.close()
    assert broker.fast_port is None  # closed with the broker
