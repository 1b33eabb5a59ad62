"""The client drivers' output: every driver (``cpp_driver.py``, ``grpc_driver.py``, the Node ``driver.js`` files)
reports JSON lines ``{"event": ...}``; ``events`` collects them up to the one a test waits for."""

from __future__ import annotations

import json
from typing import Any

from tests.servers import Proc


def events(proc: Proc, until: Any, deadline: float = 90) -> list[dict[str, Any]]:
    """JSON events from ``proc`` up to and including the first for which ``until(event, seen)`` is true."""
    seen: list[dict[str, Any]] = []

    def take(line: str) -> bool:
        try:
            ev = json.loads(line)
        except ValueError:
            return False
        seen.append(ev)
        return bool(until(ev, seen))

    proc.wait_line(take, deadline)
    return seen
