"""In-process servers for integration tests, as async context managers on ephemeral ports with files under tmp_path.

    async with run_namesrv(tmp_path) as ns:
        ...  # ns.addr == "127.0.0.1:<port>", ns.route_table, ns.kv_config, ns.config

    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, messageDelayLevel="1s 2s") as broker:
        ...  # broker.addr == "127.0.0.1:<port>", broker.store, broker.topics, broker.offsets, broker.clients

Everything a test starts is stopped on exit, whatever the test did.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from namesrv.app import NamesrvApp
from namesrv.config import load_config

if TYPE_CHECKING:
    from broker.app import BrokerApp


@asynccontextmanager
async def run_namesrv(tmp_path: Path, **overrides: Any) -> AsyncIterator[NamesrvApp]:
    """A started name server on 127.0.0.1 and a free port, its KV file under ``tmp_path/namesrv``.

    ``overrides`` use RocketMQ key names or NamesrvConfig field names, e.g.
    ``run_namesrv(tmp_path, scanNotActiveBrokerInterval=50, brokerChannelExpiredTime=300)``. The same ``tmp_path``
    gives the same KV file, so a second ``run_namesrv(tmp_path)`` is a restart.
    """
    settings: dict[str, Any] = {
        "listenPort": 0,
        "listenAddress": "127.0.0.1",
        "kvConfigPath": tmp_path / "namesrv" / "kvConfig.json",
        "configStorePath": tmp_path / "namesrv" / "namesrv.properties",
    }
    settings.update(overrides)
    app = NamesrvApp(load_config(None, settings))
    await app.start()
    try:
        yield app
    finally:
        await app.stop(grace=1.0)


@asynccontextmanager
async def run_broker(ns: NamesrvApp | str | None, tmp_path: Path, **overrides: Any) -> AsyncIterator[BrokerApp]:
    """A started broker on 127.0.0.1 and a free port, registered with ``ns`` (an app, an address list, or None),
    its store under ``tmp_path/broker``.

    ``overrides`` use RocketMQ key names or BrokerConfig field names (``autoCreateTopicEnable=False``,
    ``messageDelayLevel="1s 2s"``, ``flushDiskType="SYNC_FLUSH"``). The same ``tmp_path`` gives the same store and
    config files, so a second ``run_broker(ns, tmp_path)`` is a restart. Commit-log segments are 4 MiB by default
    here to keep test directories small.
    """
    from broker.app import BrokerApp  # imported here so namesrv-only tests never import the broker
    from broker.config import load_config as load_broker_config

    if isinstance(ns, NamesrvApp):
        namesrv = ns.addr
    else:
        namesrv = ns or ""
    settings: dict[str, Any] = {
        "listenPort": 0,
        "bindAddress": "127.0.0.1",
        "brokerIP1": "127.0.0.1",
        "namesrvAddr": namesrv,
        "storePathRootDir": tmp_path / "broker",
        "mappedFileSizeCommitLog": 4 * 1024 * 1024,
        "mappedFileSizeConsumeQueue": 30_000 * 20,
    }
    if "listenPort" in overrides and "haListenPort" not in overrides:
        settings["haListenPort"] = 0  # a restart on a fixed port: HA would bind listenPort + 1, which may be taken
    settings.update(overrides)
    app = BrokerApp(load_broker_config(None, settings))
    await app.start()
    try:
        yield app
    finally:
        await app.stop(grace=1.0)
