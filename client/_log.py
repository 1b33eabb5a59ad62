"""The SDK's loggers: structlog's API (``log.info("event", key=value)``) over standard-library loggers named
``rocketq.client.*``.

A library must not print: these loggers stay silent until the application configures ``logging`` (warnings and
errors reach stderr through logging's last-resort handler, as with any library), and the level check comes first,
so a disabled debug line costs one comparison. Lines render as ``event key=value ...``.
"""

from __future__ import annotations

import logging
import sys
import traceback
from typing import Any

import structlog


def _render(_logger: Any, method: str, event: dict[str, Any]) -> str:
    text = str(event.pop("event", ""))
    exc_info = event.pop("exc_info", None)
    if event:
        text += " " + " ".join(f"{k}={v!r}" for k, v in event.items())
    if exc_info and method != "exception":  # logging's exception() appends the traceback itself
        if exc_info is True:
            exc_info = sys.exc_info()
        elif isinstance(exc_info, BaseException):
            exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
        if exc_info[0] is not None:
            text += "\n" + "".join(traceback.format_exception(*exc_info)).rstrip()
    return text


_PROCESSORS: list[Any] = [structlog.stdlib.filter_by_level, _render]


def get_logger(name: str) -> Any:
    return structlog.wrap_logger(
        logging.getLogger(name), processors=_PROCESSORS, wrapper_class=structlog.stdlib.BoundLogger
    )
