"""Broker liveness: the periodic scan that drops silent brokers, and dropping a broker when its connection closes.

J's ``scanNotActiveBroker`` (every 10 s) + ``BrokerHousekeepingService.onChannelDestroy``. The scan period and the
expiry time are read from ``LiveConfig`` on every round, so a runtime update takes effect at the next scan. An
expired broker's connection is closed too (as J does), unless another live broker still registers over it.

``watch(channel)`` is called by the REGISTER_BROKER handler; it hooks each connection's close once, however often
the broker re-registers (every 30 s) over it.
"""

from __future__ import annotations

import asyncio

import structlog

from namesrv.config import LiveConfig
from namesrv.route_table import RouteTable
from protocol.remoting import Channel
from runtime.tasks import stop_tasks

_log = structlog.get_logger("rocketq.namesrv.housekeeping")


class BrokerHousekeeping:
    def __init__(self, routes: RouteTable, config: LiveConfig) -> None:
        self._routes = routes
        self._config = config
        self._channels: dict[int, Channel] = {}
        self._task: asyncio.Task[None] | None = None

    # -- channel close ---------------------------------------------------------------------------------------

    def watch(self, channel: Channel) -> None:
        """Drop the brokers registered over ``channel`` when it closes (idempotent per channel)."""
        if channel.conn_id in self._channels:
            return
        self._channels[channel.conn_id] = channel
        channel.add_close_callback(self._on_close)

    def _on_close(self, channel: Channel) -> None:
        self._channels.pop(channel.conn_id, None)
        gone = self._routes.remove_by_channel(channel.conn_id)
        if gone:
            _log.info("broker channel closed, brokers removed", peer=channel.peer, brokers=gone)

    # -- periodic scan ---------------------------------------------------------------------------------------

    def scan(self) -> list[str]:
        """One scan round: drop expired brokers, close their connections; returns the dropped addresses."""
        cfg = self._config.current
        ids = self._routes.channel_ids()
        gone = self._routes.expire(self._routes.now(), cfg.broker_channel_expired_time)
        for addr in gone:
            _log.warning("broker channel expired", broker=addr, expired_ms=cfg.broker_channel_expired_time)
            cid = ids.get(addr)
            channel = self._channels.get(cid) if cid is not None else None
            if channel is not None and not self._routes.has_channel(channel.conn_id):
                channel.close()
        return gone

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._config.current.scan_not_active_broker_interval / 1000)
            try:
                self.scan()
            except Exception:  # one bad round must not end liveness checking for good
                _log.exception("broker scan failed")

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="namesrv-broker-scan")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_tasks(task)
