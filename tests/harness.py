"""In-process servers for integration tests, as async context managers on ephemeral ports with files under tmp_path.

    async with run_namesrv(tmp_path) as ns:
        ...  # ns.addr == "127.0.0.1:<port>", ns.route_table, ns.kv_config, ns.config

Everything a test starts is stopped on exit, whatever the test did.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from namesrv.app import NamesrvApp
from namesrv.config import load_config


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
