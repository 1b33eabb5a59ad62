"""The event log of a controller group: a Raft log kept by PySyncObj (PyPI ``pysyncobj``, the Raft library
Patroni ships as its built-in DCS), not a Raft written here.

Each controller runs one ``SyncObj`` on its Raft address (its own thread, PySyncObj's ``autoTick``). Decided events
go into the log through the replicated ``apply_events``; PySyncObj calls it on every controller, in log order, once
a majority holds the entry, and the state changes there, under ``lock``. The leader's ``append`` resolves when its
own apply ran.

On disk, under ``<controllerStorePath>``:

| file               | what                                                                                 |
|--------------------|--------------------------------------------------------------------------------------|
| raft.journal       | PySyncObj's file journal: every log entry, the current term and vote (mmap'd)        |
| raft.journal.meta  | its commit index                                                                     |
| raft.dump          | PySyncObj's snapshot (log compaction): ``{"state": ControllerState.to_json()}`` in   |
|                    | its gzip+pickle envelope; written by this process (``useFork=False``)                |

A restarted controller loads the snapshot and replays the journal, so it keeps the state without asking its
peers. The journal is a memory map: a killed process loses nothing, a power cut can lose the entries the kernel had
not written back (PySyncObj does not fsync per entry).
"""

from __future__ import annotations

import _socket
import asyncio
import socket
import threading
from pathlib import Path
from typing import Any

import structlog
from pysyncobj import FAIL_REASON, SyncObj, SyncObjConf, SyncObjConsumer, replicated

from controller.config import Peers
from controller.state import ControllerState, Event

# PySyncObj 0.3.17 imports its ``win_inet_pton`` shim, which replaces ``socket.inet_ntop`` on every OS, not just
# Windows; off Windows the replacement raises for any IPv6 address. Put the real one back for the rest of the process
# (name server, broker decoders, the SDK), also when something imported pysyncobj first: PySyncObj itself never
# needs the shim here.
socket.inet_ntop = _socket.inet_ntop

_log = structlog.get_logger("rocketq.controller.raft")
_TIMED_OUT = -1  # not one of PySyncObj's FAIL_REASON values


class _Replicated(SyncObjConsumer):  # type: ignore[misc]  # pysyncobj ships no type hints
    def __init__(self, state: ControllerState, lock: threading.Lock) -> None:
        super().__init__()
        self._state = state
        self._lock = lock

    @replicated  # type: ignore[untyped-decorator]
    def apply_events(self, events: list[Event]) -> int:
        with self._lock:
            for event in events:
                self._state.apply(event)
        return len(events)

    def _serialize(self) -> dict[str, Any]:
        with self._lock:
            return {"state": self._state.to_json()}

    def _deserialize(self, data: dict[str, Any]) -> None:
        with self._lock:
            self._state.load_json(data.get("state", {}))


class RaftEventLog:
    def __init__(
        self, store_dir: Path, state: ControllerState, peers: Peers, *, election_timeout_ms: int, snapshot_s: int
    ) -> None:
        self.state = state
        self.lock = threading.Lock()
        self.peers = peers
        self._dir = store_dir
        self._consumer = _Replicated(state, self.lock)
        self._election_s = election_timeout_ms / 1000
        self._snapshot_s = snapshot_s
        self._sync: SyncObj | None = None

    async def start(self) -> None:
        self._dir.mkdir(parents=True, exist_ok=True)
        low = self._election_s * 0.6
        conf = SyncObjConf(
            journalFile=str(self._dir / "raft.journal"),
            fullDumpFile=str(self._dir / "raft.dump"),
            useFork=False,
            raftMinTimeout=low,
            raftMaxTimeout=low * 2.5,
            appendEntriesPeriod=min(0.1, low / 4),
            connectionRetryTime=1.0,
            logCompactionMinTime=self._snapshot_s,
            dynamicMembershipChange=False,
        )
        me, others = self.peers.self_peer.raft_addr, [p.raft_addr for p in self.peers.others]
        # SyncObj binds its port and loads the journal in its constructor: off the event loop
        self._sync = await asyncio.to_thread(SyncObj, me, others, conf, [self._consumer])

    async def stop(self) -> None:
        sync, self._sync = self._sync, None
        if sync is not None:
            await asyncio.to_thread(sync.destroy_synchronous)

    @property
    def is_leader(self) -> bool:
        return self._sync is not None and bool(self._sync._isLeader())

    @property
    def term(self) -> int:
        return int(self._sync._getTerm()) if self._sync is not None else 0

    def leader(self) -> tuple[str, str] | None:
        node = self._sync._getLeader() if self._sync is not None else None
        if node is None:
            return None
        peer = self.peers.by_raft(str(node.id))
        return None if peer is None else (peer.peer_id, peer.rpc_addr)

    def status(self) -> dict[str, Any]:
        """PySyncObj's own status (term, commit index, partners) for logs and tests."""
        return dict(self._sync.getStatus()) if self._sync is not None else {}

    async def append(self, events: list[Event], timeout: float) -> bool:
        if self._sync is None:
            return False
        loop = asyncio.get_running_loop()
        done: asyncio.Future[int] = loop.create_future()

        def callback(result: Any, error: int) -> None:  # PySyncObj's thread
            loop.call_soon_threadsafe(_resolve, done, error)

        self._consumer.apply_events(list(events), callback=callback)
        # call_later, not asyncio.timeout: a handler may get here before its first suspension, outside any Task
        timer = loop.call_later(timeout, _resolve, done, _TIMED_OUT)
        try:
            error = await done
        finally:
            timer.cancel()
        if error == _TIMED_OUT:
            _log.warning("raft append timed out", events=len(events), timeout=timeout)
            return False
        if error != FAIL_REASON.SUCCESS:
            _log.warning("raft append failed", events=len(events), reason=error)
            return False
        return True


def _resolve(fut: asyncio.Future[int], error: int) -> None:
    if not fut.done():
        fut.set_result(error)
