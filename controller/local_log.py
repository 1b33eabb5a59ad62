"""The event log of a single controller (no Raft peers): events are applied at once and the whole state is saved
after each change, so a restart keeps it. Also the ``EventLog`` protocol both logs follow.

On disk, ``<controllerStorePath>/controller-state.json``: the state machine's snapshot (``ControllerState.to_json``)
plus ``{"version": 1, "applied": <events applied so far>}``; written to ``.tmp``, fsynced, renamed over the old one.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any, Protocol

from controller.state import ControllerState, Event
from runtime.properties_file import write_properties_file_atomically

STATE_FILE = "controller-state.json"


class EventLog(Protocol):
    """Where decided events go: applied to ``state`` on every controller, in one order."""

    state: ControllerState
    lock: threading.Lock  # held while the state is read or changed (a Raft log applies on its own thread)

    @property
    def is_leader(self) -> bool:
        """True when this controller may decide (the Raft leader; always, for a single controller)."""

    @property
    def term(self) -> int:
        """The leadership term (changes when another controller may have decided in between)."""

    def leader(self) -> tuple[str, str] | None:
        """(peer id, remoting address) of the leader as far as this controller knows."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def append(self, events: list[Event], timeout: float) -> bool:
        """Replicate ``events`` (an empty list is a barrier) and return once they are applied here; False when
        they could not be committed (lost leadership, no quorum, timeout)."""


class LocalEventLog:
    def __init__(self, store_dir: Path, state: ControllerState, self_id: str) -> None:
        self.state = state
        self.lock = threading.Lock()
        self._path = store_dir / STATE_FILE
        self._self_id = self_id
        self._applied = 0

    @property
    def is_leader(self) -> bool:
        return True

    @property
    def term(self) -> int:
        return 1

    def leader(self) -> tuple[str, str] | None:
        return None  # the app knows its own address (ControllerApp.metadata)

    async def start(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        if self._path.exists():
            data: dict[str, Any] = json.loads(self._path.read_text("utf-8"))
            self.state.load_json(data)
            self._applied = int(data.get("applied", 0))

    async def stop(self) -> None:
        return None

    async def append(self, events: list[Event], timeout: float) -> bool:
        if not events:
            return True
        with self.lock:
            for event in events:
                self.state.apply(event)
            self._applied += len(events)
            snapshot = {"version": 1, "applied": self._applied, **self.state.to_json()}
        await asyncio.to_thread(
            write_properties_file_atomically, self._path, json.dumps(snapshot, sort_keys=True, indent=1)
        )
        return True
