"""The RocketMQ-compatible name server: route table, broker liveness and KV config (imports ``protocol`` only)."""

from __future__ import annotations

from namesrv.app import NamesrvApp
from namesrv.config import NamesrvConfig, load_config

__all__ = ["NamesrvApp", "NamesrvConfig", "load_config"]
