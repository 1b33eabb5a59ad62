"""GET_BROKER_CONFIG (26) and UPDATE_BROKER_CONFIG (25), the latter restricted to an ALLOW-LIST.

CVE-2023-33246 (docs/reference/reliability.md §3.3): J let an unauthenticated UPDATE_BROKER_CONFIG set any field by reflection,
including ``rocketmqHome`` and ``filterServerNums``, and a later ``sh <rocketmqHome>/bin/startfsrv.sh`` turned that
into remote code execution; CVE-2023-37582 did the same with a file path. Here only keys that the running broker
can apply safely, and that name no path, address, port or process, change at once (``RuntimeConfig.allowed``, the
keys the app wired an applier for, e.g. ``maxMessageSize``). Like J 5.5 (which refuses only its black list), any
other known key that names no path, address, port or process is accepted too: written to the file and shown by
GET_BROKER_CONFIG, it takes effect at the next start (the reply's remark names those keys). Refused with NO_PERMISSION
and a remark naming each refused key: ``storePathRootDir``, ``storePathCommitLog``, ``rocketmqHome``,
``namesrvAddr``, ``listenPort``, ``brokerConfigPath``, ``filterServerNums``, any ``*Path``/``*Dir``/``*Home``/
``*Addr``/``*Port`` key, keys RocketMQ knows that do not apply here, and unknown keys. An update is all-or-nothing:
one refused key or one invalid value (SYSTEM_ERROR naming the key) changes nothing. Nothing here spawns a process.

GET_BROKER_CONFIG: body = ``key=value`` lines of the current config (``broker.config.format_config``), ext
``version`` = the config's DataVersion JSON (bumped by every accepted update).

Accepted updates are written back to the file the broker was started with (``-c``; ``BrokerConfig.config_file``),
as J does: the changed keys are rewritten in place (comments and the other lines kept, new keys appended) through a
temporary file, fsync and rename, BEFORE they take effect — a file that cannot be written refuses the update. A
broker started without a file keeps accepted updates in memory only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

import structlog

from broker.config import (
    ALIASES,
    KEYS,
    NO_EFFECT_KEYS,
    BrokerConfig,
    ConfigError,
    config_from_properties,
    format_config,
    parse_properties,
)
from broker.services.topic_config import new_data_version, next_data_version
from protocol.bodies.properties_text import update_properties_text
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting.handler import Handler, HandlerError, RequestContext
from runtime.properties_file import read_properties_file, write_properties_file_atomically

_log = structlog.get_logger("rocketq.broker.admin")

Applier = Callable[[BrokerConfig], None]

# Never changeable at runtime, whatever an applier table says (defence in depth for the allow-list).
_FORBIDDEN_SUFFIXES = ("path", "dir", "home", "addr", "port", "ip1", "ip2", "nums")


def _forbidden(key: str) -> bool:
    low = key.lower()
    return any(low.endswith(s) for s in _FORBIDDEN_SUFFIXES) or "path" in low or "home" in low


def _values(cfg: BrokerConfig) -> dict[str, object]:
    return {name: getattr(getattr(cfg, s.section), s.field) for name, s in KEYS.items()}


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


class RuntimeConfig:
    """The broker's current config plus, per allowed key, how to apply a new value to the running services."""

    def __init__(self, config: BrokerConfig, appliers: Mapping[str, Applier]) -> None:
        bad = [k for k in appliers if k not in KEYS or _forbidden(k)]
        if bad:
            raise ValueError(f"keys that must never change at runtime: {bad}")
        self.config = config
        self._appliers = dict(appliers)
        self.data_version = new_data_version()

    @property
    def allowed(self) -> frozenset[str]:
        return frozenset(self._appliers)

    def _current_values(self) -> dict[str, object]:
        return _values(self.config)

    @staticmethod
    def _persist(path: str, updates: dict[str, str]) -> None:
        """Write ``updates`` into the broker's config file (comments and other lines kept) before they take effect;
        a file that cannot be written refuses the update."""
        try:
            text = read_properties_file(path, ConfigError)
            write_properties_file_atomically(path, update_properties_text(text, updates))
        except (ConfigError, OSError) as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"config not changed, cannot write {path}: {exc}") from None

    def update(self, items: list[tuple[str, str]]) -> list[str]:
        """Validate and apply ``items`` all-or-nothing; returns the keys that changed. Raises HandlerError. Keys
        without an applier (``at_restart``) are kept in the config and the file only."""
        refused: list[str] = []
        unknown: list[str] = []
        wanted: dict[str, str] = {}
        for key, value in items:
            name = ALIASES.get(key, key)
            if name not in KEYS:
                if key in NO_EFFECT_KEYS:
                    refused.append(key)
                else:
                    unknown.append(key)
                continue
            if name not in self._appliers and _forbidden(name):
                refused.append(name)
                continue
            wanted[name] = value
        if unknown or refused:
            parts = []
            if unknown:
                parts.append("unknown config key(s): " + ", ".join(unknown))
            if refused:
                parts.append("config key(s) not allowed to change at runtime: " + ", ".join(refused))
            parts.append("applied at once: " + ", ".join(sorted(self._appliers)))
            raise HandlerError(ResponseCode.NO_PERMISSION, "; ".join(parts))
        merged = self._current_values()
        merged.update(wanted)
        try:
            new = config_from_properties("", "<update>", merged).model_copy(
                update={"config_file": self.config.config_file}
            )
        except ConfigError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, str(exc)) from None
        old_values = self._current_values()
        new_values = _values(new)
        changed = [k for k in wanted if new_values[k] != old_values[k]]
        if changed and new.config_file:
            self._persist(new.config_file, {k: _text(new_values[k]) for k in changed})
        self.config = new
        for key in changed:
            if key in self._appliers:
                self._appliers[key](new)
        if changed:
            self.data_version = next_data_version(self.data_version)
        return changed


class BrokerConfigHandlers:
    def __init__(self, runtime: RuntimeConfig) -> None:
        self._rt = runtime

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.GET_BROKER_CONFIG: self.get_config,
            RequestCode.UPDATE_BROKER_CONFIG: self.update_config,
        }

    async def get_config(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        version = json.dumps(self._rt.data_version.to_json(), separators=(",", ":"))
        return cmd.make_response(ext_fields={"version": version}, body=format_config(self._rt.config).encode())

    async def update_config(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        if not cmd.body:
            return cmd.make_response()
        try:
            items = [(k, v) for _no, k, v in parse_properties(cmd.body.decode("utf-8"), "<request body>")]
        except (ConfigError, UnicodeDecodeError) as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"bad config body: {exc}") from None
        try:
            changed = self._rt.update(items)
        except HandlerError as exc:
            _log.warning(
                "broker config update refused", peer=ctx.conn.peer, keys=[k for k, _ in items], reason=exc.remark
            )
            raise
        later = [k for k in changed if k not in self._rt.allowed]
        _log.info("broker config updated", peer=ctx.conn.peer, changed=changed, at_restart=later)
        return cmd.make_response(remark=f"takes effect at restart: {', '.join(later)}" if later else None)
