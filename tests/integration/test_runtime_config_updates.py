"""UPDATE_BROKER_CONFIG as RocketMQ 5.5 allows it: ``maxMessageSize`` changes at once (the next send is checked
against it, in the handler and the store); other known keys that name no path, address, port or process are
accepted, kept (and written to the config file,
which tests/integration/test_broker_conf_files.py checks) and take effect at restart; path-like keys stay refused (the CVE-2023-33246 guard)."""

from __future__ import annotations

from pathlib import Path

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import send


def update(text: str) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.UPDATE_BROKER_CONFIG, {}, text.encode())


async def test_max_message_size_applies_live_and_other_keys_at_restart(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        client = RemotingClient()
        try:
            assert (await send(client, broker.addr, "T", b"x" * 2000)).code == ResponseCode.SUCCESS
            resp = await client.invoke(broker.addr, update("maxMessageSize=1024"))
            assert (resp.code, resp.remark) == (ResponseCode.SUCCESS, None)
            too_big = await send(client, broker.addr, "T", b"x" * 2000)
            assert too_big.code == ResponseCode.MESSAGE_ILLEGAL and "1024" in (too_big.remark or "")
            assert broker.store is not None and broker.store.config.max_message_size == 1024
            assert (await send(client, broker.addr, "T", b"x" * 500)).code == ResponseCode.SUCCESS
            later = await client.invoke(broker.addr, update("maxMessageSize=4096\nmessageDelayLevel=1s 2s"))
            assert later.code == ResponseCode.SUCCESS
            assert later.remark == "takes effect at restart: messageDelayLevel"
            assert (await send(client, broker.addr, "T", b"x" * 2000)).code == ResponseCode.SUCCESS
            got = await client.invoke(broker.addr, RemotingCommand.request(RequestCode.GET_BROKER_CONFIG))
            assert b"maxMessageSize=4096" in got.body and b"messageDelayLevel=1s 2s" in got.body
            for key in ("storePathRootDir=/tmp/x", "rocketmqHome=/tmp/x", "listenPort=1", "namesrvAddr=1.2.3.4:1"):
                refused = await client.invoke(broker.addr, update(key))
                assert refused.code == ResponseCode.NO_PERMISSION, key
        finally:
            await client.close()
