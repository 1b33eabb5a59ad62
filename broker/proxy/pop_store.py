"""Persistence of the POP state (``pop_state.PopState``): ``<storePathRootDir>/config/popState.json``, written with
the broker's atomic JSON writer (tmp + fsync + rename, ``.bak`` kept; ``broker.persistence.JsonFile``), coalesced
after every change and flushed at stop, so in-flight messages, receipt handles, attempt counts and pop offsets survive
a restart (as the consumer offsets do).

File format (keys in this order)::

    {
     "nextId": 43,
     "offsetTable": {"TopicA@GID_a": {"0": 120, "1": 118}},
     "inFlight": [{"id": 42, "gen": 1, "group": "GID_a", "topic": "TopicA", "queue_id": 0, "queue_offset": 119,
                   "phys": 52311, "size": 211, "message_id": "01...", "attempt": 2, "deadline_ms": 1732390000000,
                   "fifo": false}]
    }
"""

from __future__ import annotations

import os

from broker.persistence import JsonFile, TableWriter, dumps
from broker.proxy.pop_state import PopState


class PopStore:
    def __init__(self, config_dir: str) -> None:
        self._file = JsonFile(os.path.join(config_dir, "popState.json"))
        self.state = PopState()
        self._writer = TableWriter(self._file, self.encode)

    def load(self) -> PopState:
        raw = self._file.load()
        if isinstance(raw, dict):
            self.state = PopState.from_json(raw)
        return self.state

    def encode(self) -> bytes:
        return dumps(self.state.to_json())

    def changed(self) -> None:
        self._writer.mark_dirty()

    async def flush(self) -> None:
        await self._writer.flush()
