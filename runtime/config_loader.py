"""The config-key plumbing the broker, the name server and the controller share: from Java-properties text (``broker.conf``,
``namesrv.conf``) and overrides to a frozen pydantic config, through one table of RocketMQ key names per daemon
(``KeyTable``). Each daemon's config module owns its model, its table and its printers; this module owns:

| step              | rule                                                                                      |
| ----------------- | ----------------------------------------------------------------------------------------- |
| parse             | ``protocol.bodies.properties_text`` (Java's grammar); a bad line is a ``ConfigError`` naming the line |
| key name          | RocketMQ name, an alias (old J spelling) or the python field name; unknown → ``ConfigError`` with "did you mean" |
| no-effect key     | a key J reads that does nothing here: its value checked against J's kind, then one warning line naming all of them |
| value             | ``int`` / ``bool`` (``true``/``false``, any case) / ``str``; a non-string override is kept (numbers become text for ``str`` keys) |
| model             | pydantic validation; a failure names the RocketMQ key and the value                       |

Error messages are one line: ``<source> line <n>: <key>=<value>: <problem>`` for a file, without the source for
overrides.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from protocol.bodies.properties_text import parse_properties as _parse_properties
from runtime.java_config_keys import check_value, did_you_mean
from runtime.logsetup import check_log_levels
from runtime.properties_file import read_properties_file

M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """A config file or override that cannot be used; the message is one line and names the key or line."""


class ConfigUpdateRefused(ConfigError):
    """A runtime update named a key the daemon does not let change at runtime."""


def home_path(*parts: str) -> str:
    """``~/<parts>``: where J's defaults put a daemon's files."""
    return str(Path.home().joinpath(*parts))


class DaemonBasics(BaseModel):
    """The keys the name server and the controller read the same way: ``rocketmqHome``, the metrics endpoint
    (``metricsExporterType`` DISABLE or PROM, J's numbers 0 and 2 too) and the log files (as the broker's). Each
    daemon's model adds its own keys (and its own ``metricsPromExporterPort`` default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rocketmq_home: str = Field(default_factory=lambda: os.environ.get("ROCKETMQ_HOME", ""))
    metrics_exporter_type: Literal["DISABLE", "PROM"] = "DISABLE"
    metrics_prom_exporter_host: str = ""
    metrics_prom_exporter_port: int = Field(5557, ge=0, le=65535)
    metrics_label: str = ""
    log_dir: str = Field(default_factory=lambda: home_path("logs", "rocketmqlogs"))
    log_level: str = "INFO"
    log_format: Literal["text", "json"] = "text"
    log_file_max_size: int = Field(128 * 1024 * 1024, ge=0)
    log_file_max_index: int = Field(10, ge=1)

    _level = field_validator("log_level")(check_log_levels)

    @field_validator("metrics_exporter_type", mode="before")
    @classmethod
    def _exporter(cls, v: Any) -> Any:
        v = {"0": "DISABLE", "2": "PROM"}.get(str(v).strip(), str(v).strip().upper())
        if v not in ("DISABLE", "PROM"):
            raise ValueError("only DISABLE and PROM are supported")
        return v

    @property
    def labels(self) -> dict[str, str]:
        return metric_labels(self.metrics_label)


@dataclass(frozen=True, slots=True)
class Key:
    """Where a RocketMQ key lands in the config model: ``section.field`` (``section`` empty for a flat model)."""

    field: str
    kind: type  # int, bool or str
    section: str = ""
    important: bool = False  # the broker's ``-m`` prints only these


# DaemonBasics' metrics and log keys, in the order ``-p`` prints them (each daemon's table splices them in)
OBSERVABILITY_KEYS: dict[str, Key] = {
    "metricsExporterType": Key("metrics_exporter_type", str),
    "metricsPromExporterHost": Key("metrics_prom_exporter_host", str),
    "metricsPromExporterPort": Key("metrics_prom_exporter_port", int),
    "metricsLabel": Key("metrics_label", str),
    "logDir": Key("log_dir", str),
    "logLevel": Key("log_level", str),
    "logFormat": Key("log_format", str),
    "logFileMaxSize": Key("log_file_max_size", int),
    "logFileMaxIndex": Key("log_file_max_index", int),
}


def parse_properties(text: str, source: str = "<config>") -> list[tuple[int, str, str]]:
    """Java-properties text → ``(line_no, key, value)`` (``protocol.bodies.properties_text``); a bad line is a ConfigError."""
    return _parse_properties(text, source, ConfigError)


def warn_stderr(line: str) -> None:
    """The default ``warn``: the line on stderr (before logging is configured)."""
    print(line, file=sys.stderr)


def metric_labels(text: str) -> dict[str, str]:
    """``metricsLabel`` (``name:value[,name:value]``, both daemons) → {name: value}, blanks stripped."""
    out = {}
    for pair in filter(None, text.split(",")):
        key, _, value = pair.partition(":")
        out[key.strip()] = value.strip()
    return out


def bad_value_j(key: str, kind: type, value: str) -> str | None:
    """J's form of a bad value: ``key=value: expected <form>`` (``runtime.java_config_keys.check_value``)."""
    return check_value(key, kind, value)


class KeyTable(Generic[M]):
    """One daemon's RocketMQ key table over its config model ``model``; ``file_keys`` are all the keys J reads
    from that daemon's file with their kinds (those not in ``keys`` are accepted without effect)."""

    def __init__(
        self,
        model: type[M],
        keys: dict[str, Key],
        file_keys: Mapping[str, type],
        *,
        aliases: Mapping[str, str] | None = None,
        bad_value: Callable[[str, type, str], str | None] = bad_value_j,
    ) -> None:
        self.model = model
        self.keys = keys
        self.aliases: dict[str, str] = dict(aliases or {})
        self.file_keys = file_keys
        self.no_effect: frozenset[str] = frozenset(file_keys) - set(keys) - set(self.aliases)
        self._bad_value = bad_value
        self._by_field = {(k.section, k.field): name for name, k in keys.items()}

    def canonical(self, key: str) -> str:
        """The RocketMQ key for ``key`` (accepts aliases and python field names); raises ConfigError if unknown."""
        key = self.aliases.get(key, key)
        if key in self.keys:
            return key
        for name, spec in self.keys.items():
            if spec.field == key:
                return name
        raise ConfigError(f"unknown config key '{key}'{did_you_mean(key, [*self.keys, *self.no_effect])}")

    def convert(self, key: str, kind: type, value: Any) -> Any:
        """``value`` (text from a file, or an override's python value) as ``kind``; bad text is a ConfigError."""
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str):
            if kind is str and isinstance(value, int | float) and not isinstance(value, bool):
                return str(value)
            return value
        problem = self._bad_value(key, kind, value)
        if problem is not None:
            raise ConfigError(problem)
        if kind is int:
            return int(value.strip())
        if kind is bool:
            return value.strip().lower() == "true"
        return value

    def collect(
        self,
        items: Iterable[tuple[str, Any]],
        into: dict[str, Any],
        where: str = "",
        ignored: list[str] | None = None,
    ) -> None:
        """Add ``items`` (key → value) to ``into`` (model field values, nested by section); keys without effect
        are checked and appended to ``ignored`` once each."""
        for key, value in items:
            try:
                if key in self.no_effect:
                    if isinstance(value, str):
                        problem = check_value(key, self.file_keys[key], value)
                        if problem is not None:
                            raise ConfigError(problem)
                    if ignored is not None and key not in ignored:
                        ignored.append(key)
                    continue
                name = self.canonical(key)
                spec = self.keys[name]
                target = into.setdefault(spec.section, {}) if spec.section else into
                target[spec.field] = self.convert(name, spec.kind, value)
            except ConfigError as exc:
                raise ConfigError(f"{where}{exc}") from None

    def build(self, data: dict[str, Any], where: str = "", base: M | None = None) -> M:
        """The model of ``data`` (over ``base``'s values, if given); a validation failure names the key."""
        merged = _merge(base.model_dump() if base is not None else {}, data)
        try:
            return self.model.model_validate(merged)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = [str(p) for p in err["loc"]]
            msg = str(err["msg"]).removeprefix("Value error, ")
            if not loc:
                raise ConfigError(f"{where}{msg}") from None
            nested = len(loc) >= 2 and isinstance(merged.get(loc[0]), dict)
            section, field = (loc[0], loc[1]) if nested else ("", loc[0])
            key = self._by_field.get((section, field), field)
            value = (merged.get(section, {}) if section else merged).get(field)
            shown = str(value).lower() if isinstance(value, bool) else value
            raise ConfigError(f"{where}{key}={shown}: {msg}") from None

    def from_properties(
        self,
        text: str,
        source: str = "<config>",
        overrides: Mapping[str, Any] | None = None,
        *,
        warn: Callable[[str], None] = warn_stderr,
    ) -> M:
        """The config of properties ``text`` plus ``overrides``; keys RocketMQ knows that do nothing here are
        reported through ``warn`` in one line."""
        data: dict[str, Any] = {}
        ignored: list[str] = []
        for no, key, value in parse_properties(text, source):
            self.collect([(key, value)], data, f"{source} line {no}: ", ignored)
        self.collect((overrides or {}).items(), data, "", ignored)
        cfg = self.build(data, f"{source}: " if text else "")
        if ignored:
            warn(f"WARN {source}: RocketMQ config key(s) accepted without effect here: {', '.join(ignored)}")
        return cfg

    def load(
        self,
        path: str | os.PathLike[str] | None,
        overrides: Mapping[str, Any] | None = None,
        *,
        warn: Callable[[str], None] = warn_stderr,
    ) -> M:
        """The config file at ``path`` (the defaults when None) plus overrides (RocketMQ key or field name →
        value)."""
        if path is None:
            return self.from_properties("", "<defaults>", overrides, warn=warn)
        text = read_properties_file(path, ConfigError)
        return self.from_properties(text, os.fspath(path), overrides, warn=warn)


def _merge(base: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in data.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out
