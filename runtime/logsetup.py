"""Daemon logging: structlog over the standard library's ``logging``, so every line (structlog's and plain
``logging``'s, e.g. the store's) goes through stdlib handlers, levels and rotation.

* stderr: human-readable when it is a terminal, JSON lines otherwise (docs/DESIGN.md), or JSON when asked.
* files (when a directory is given): J's layout under ``~/logs/rocketmqlogs/``: the daemon's main file
  (``broker.log`` / ``namesrv.log``) plus ``store.log`` (loggers ``rocketq.store*``) and ``remoting.log``
  (``rocketq.remoting*``), which the main file leaves out, as J splits them. Each is a ``RotatingFileHandler``:
  rolled at ``max_bytes`` to ``.1`` … ``.<backup_count>``. Human-readable lines by default, JSON on request.
* levels: ``"INFO"`` or ``"INFO,rocketq.remoting=DEBUG,rocketq.store=WARN"``: the root level, then per-logger
  overrides (stdlib logger levels; a child inherits its parent's).

``parse_log_levels`` validates such a spec (config loaders call it through ``check_log_levels``, so a bad level is a
config error).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

_LEVELS = {"TRACE": logging.DEBUG, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING}
_LEVELS.update({"WARNING": logging.WARNING, "ERROR": logging.ERROR, "CRITICAL": logging.CRITICAL, "OFF": 100})

DEFAULT_SPLIT: dict[str, str] = {"rocketq.store": "store.log", "rocketq.remoting": "remoting.log"}


def _level(text: str) -> int:
    lvl = _LEVELS.get(text.strip().upper())
    if lvl is None:
        raise ValueError(f"bad log level {text.strip()!r} (expected one of {', '.join(_LEVELS)})")
    return lvl


def parse_log_levels(spec: str) -> tuple[int, dict[str, int]]:
    """``"INFO,rocketq.remoting=DEBUG"`` → (root level, {logger: level}); raises ValueError naming the bad part."""
    root = logging.INFO
    per: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, sep, lvl = part.partition("=")
        if sep:
            if not name.strip():
                raise ValueError(f"bad log level override {part!r} (expected logger=LEVEL)")
            per[name.strip()] = _level(lvl)
        else:
            root = _level(name)
    return root, per


def check_log_levels(spec: str) -> str:
    """``spec`` unchanged when ``parse_log_levels`` accepts it (the daemons' ``logLevel`` validator)."""
    parse_log_levels(spec)
    return spec


@dataclass(frozen=True)
class LogSettings:
    level: str = "INFO"
    directory: str | None = None  # None: stderr only
    main_file: str = "broker.log"
    split: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_SPLIT))
    max_bytes: int = 128 * 1024 * 1024
    backup_count: int = 10
    json: bool = False  # files (and stderr) in JSON lines

    @classmethod
    def from_keys(cls, keys: LogKeys, main_file: str) -> LogSettings:
        """The config's ``logDir``/``logLevel``/``logFormat``/``logFileMaxSize``/``logFileMaxIndex`` (the broker's
        and the name server's share them) → settings; logFileMaxSize=0 → stderr only."""
        return cls(
            level=keys.log_level,
            directory=os.path.expanduser(keys.log_dir) if keys.log_file_max_size > 0 else None,
            main_file=main_file,
            max_bytes=keys.log_file_max_size,
            backup_count=keys.log_file_max_index,
            json=keys.log_format == "json",
        )


class LogKeys(Protocol):
    """The log keys of a daemon's config, as ``LogSettings.from_keys`` reads them."""

    @property
    def log_level(self) -> str: ...
    @property
    def log_dir(self) -> str: ...
    @property
    def log_format(self) -> str: ...
    @property
    def log_file_max_size(self) -> int: ...
    @property
    def log_file_max_index(self) -> int: ...


class _Prefixes(logging.Filter):
    """Passes records whose logger is (``include``) or is not (not ``include``) under one of ``prefixes``."""

    def __init__(self, prefixes: Sequence[str], include: bool) -> None:
        super().__init__()
        self._prefixes = tuple(prefixes)
        self._include = include

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        hit = any(name == p or name.startswith(p + ".") for p in self._prefixes)
        return hit if self._include else not hit


_installed: list[logging.Handler] = []
_levelled: list[str] = []


def configure(settings: LogSettings, *, stderr_json: bool | None = None, cache: bool = True) -> None:
    """(Re)configure logging for a daemon. Called again, it replaces what an earlier call installed."""
    root_level, per_logger = parse_log_levels(settings.level)
    if stderr_json is None:
        stderr_json = settings.json or not sys.stderr.isatty()
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[structlog.stdlib.filter_by_level, *shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=cache,
    )

    def formatter(json: bool) -> logging.Formatter:
        renderer: Any = (
            structlog.processors.JSONRenderer()
            if json
            else structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)
        )
        chain: list[Any] = [structlog.stdlib.ProcessorFormatter.remove_processors_meta]
        if json:
            chain.append(structlog.processors.format_exc_info)
        return structlog.stdlib.ProcessorFormatter(processors=[*chain, renderer], foreign_pre_chain=shared)

    handlers: list[logging.Handler] = []
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(formatter(stderr_json))
    handlers.append(stderr)
    if settings.directory:
        os.makedirs(settings.directory, exist_ok=True)

        def rotating(name: str) -> logging.Handler:
            h = logging.handlers.RotatingFileHandler(
                os.path.join(settings.directory or ".", name),
                maxBytes=settings.max_bytes,
                backupCount=settings.backup_count,
                encoding="utf-8",
            )
            h.setFormatter(formatter(settings.json))
            return h

        main = rotating(settings.main_file)
        main.addFilter(_Prefixes(list(settings.split), include=False))
        handlers.append(main)
        for prefix, name in settings.split.items():
            h = rotating(name)
            h.addFilter(_Prefixes([prefix], include=True))
            handlers.append(h)
    root = logging.getLogger()
    for old in _installed:
        root.removeHandler(old)
        old.close()
    for name in _levelled:
        logging.getLogger(name).setLevel(logging.NOTSET)
    root.handlers[:] = [h for h in root.handlers if h not in _installed]
    _installed[:] = handlers
    for h in handlers:
        root.addHandler(h)
    root.setLevel(root_level)
    _levelled[:] = list(per_logger)
    for name, lvl in per_logger.items():
        logging.getLogger(name).setLevel(lvl)


def reset() -> None:
    """Remove what ``configure`` installed (tests) and put structlog back to its defaults."""
    root = logging.getLogger()
    for h in _installed:
        root.removeHandler(h)
        h.close()
    _installed.clear()
    for name in _levelled:
        logging.getLogger(name).setLevel(logging.NOTSET)
    _levelled.clear()
    root.setLevel(logging.WARNING)
    structlog.reset_defaults()
