"""ControllerService: what a controller does between the wire and its state machine — J 5.5.0's
``ControllerManager`` + ``DLedgerController`` event scheduler, on one asyncio loop.

* **Leader only.** Every decision but GET_METADATA and heartbeats answers CONTROLLER_NOT_LEADER on a follower
  ("The controller is not in leader state"), as J.
* **One decision at a time.** A decision reads the state and its events are committed (``EventLog.append``) before
  the next decision starts, so no two decisions see the same old state. After each change of leadership term a
  barrier (an empty append) first makes sure every earlier entry is applied here (J: the new leader's initial
  proposal). A commit that fails answers SYSTEM_ERROR and changes nothing.
* **Liveness.** BROKER_HEARTBEAT feeds the heartbeat table; every ``scanNotActiveBrokerInterval`` the expired
  brokers are dropped (their connections closed) and a closed broker connection drops it at once. A dropped broker
  that was its group's master triggers an election (``electMasterMaxRetryCount`` tries); so does the leader's
  ``scanInactiveMasterInterval`` scan for groups whose master is gone while a replica is live — that scan waits
  until this controller has led for ``max(scanInactiveMasterInterval, 5 s)``, so a new leader does not take a master
  it has not heard from yet for a dead one.
* **Notify.** After a successful election (``notifyBrokerRoleChanged``) every live replica of the group gets
  NOTIFY_BROKER_ROLE_CHANGED (oneway) with the new master, epochs and SyncStateSet.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import structlog

from controller.config import ControllerConfig
from controller.heartbeat import Heartbeat, HeartbeatTable
from controller.local_log import EventLog
from controller.state import ControllerState, Decision
from protocol.bodies.controller import ElectMasterResponseBody, SyncStateSet
from protocol.codes import RequestCode
from protocol.codes import ResponseCode as R
from protocol.command import RemotingCommand
from protocol.headers.controller import (
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    NotifyBrokerRoleChangedRequestHeader,
)
from protocol.remoting.client import RemotingClient
from protocol.remoting.handler import Channel
from runtime.tasks import stop_tasks

_log = structlog.get_logger("rocketq.controller")

COMMIT_TIMEOUT_S = 5.0  # J ControllerRequestProcessor.WAIT_TIMEOUT_OUT
NOT_LEADER = "The controller is not in leader state"
# a broker heartbeats each controller every second once it has found it (J scans the addresses every 3 s)
LEADER_GRACE_MS = 5000


_ELECTION_RESULTS: dict[int, str] = {
    R.SUCCESS: "new_master_elected",
    R.CONTROLLER_MASTER_STILL_EXIST: "keep_current_master",
    R.CONTROLLER_MASTER_NOT_AVAILABLE: "no_master_elected",
    R.CONTROLLER_ELECT_MASTER_FAILED: "no_master_elected",
}


@dataclass(slots=True)
class ElectionCounts:
    """Elections by J's ``election_result`` label, per (cluster, broker set)."""

    counts: dict[tuple[str, str, str], int] = field(default_factory=dict)

    def add(self, cluster: str, name: str, code: int) -> None:
        result = _ELECTION_RESULTS.get(code)
        if result is not None:
            key = (cluster, name, result)
            self.counts[key] = self.counts.get(key, 0) + 1


class ControllerService:
    def __init__(
        self,
        config: Callable[[], ControllerConfig],
        log: EventLog,
        heartbeats: HeartbeatTable,
        notifier: RemotingClient | None = None,
    ) -> None:
        self._config = config
        self.log = log
        self.heartbeats = heartbeats
        self._notifier = notifier
        self._serial = asyncio.Lock()
        self._ready_term = -1
        self._watched: set[int] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[None]] = set()
        self.elections = ElectionCounts()
        self._scan_term: int | None = None
        self._stopped = False
        self._leader_since = 0.0

    @property
    def state(self) -> ControllerState:
        return self.log.state

    def alive(self, cluster: str, name: str, broker_id: int) -> bool:
        return self.heartbeats.is_alive(cluster, name, broker_id)

    # -- lifecycle -------------------------------------------------------------------------------------------------

    def start(self) -> None:
        self._stopped = False
        self._tasks = [
            asyncio.create_task(self._every(self._until_next_expiry, self.scan_expired)),
            asyncio.create_task(
                self._every(lambda: self._config().scan_inactive_master_interval, self.scan_inactive_masters)
            ),
        ]

    async def stop(self) -> None:
        """Stop deciding on our own: the connections the server closes next are a shutdown, not dead brokers."""
        self._stopped = True
        await stop_tasks(*self._tasks, *self._background)
        self._tasks = []

    async def _every(self, period_ms: Callable[[], int], job: Callable[[], object]) -> None:
        while True:
            await asyncio.sleep(period_ms() / 1000)
            try:
                result = job()
                if asyncio.iscoroutine(result):
                    await result
            except Exception:
                _log.exception("controller scan failed")

    def _until_next_expiry(self) -> int:
        """The expiry scan's next wait (ms): ``scanNotActiveBrokerInterval``, or less when a broker's heartbeat
        runs out sooner — a silent master is noticed when its timeout ends, not up to one interval later (J
        scans every interval; the rest of a failover is J's)."""
        period = self._config().scan_not_active_broker_interval
        nxt = self.heartbeats.next_expiry_ms()
        if nxt is None:
            return period
        return max(1, min(period, nxt - self.heartbeats.now_ms() + 1))

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        if self._stopped:
            coro.close()
            return
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- decisions -------------------------------------------------------------------------------------------------

    async def decide(self, decision: Callable[[ControllerState], Decision], *, write: bool) -> Decision:
        """Take ``decision`` on the leader's state, commit its events (when ``write``) and return it."""
        if not self.log.is_leader:
            return Decision().fail(R.CONTROLLER_NOT_LEADER, NOT_LEADER)
        async with self._serial:
            term = self.log.term
            if self._ready_term != term:
                if not await self.log.append([], COMMIT_TIMEOUT_S):
                    return Decision().fail(R.CONTROLLER_NOT_LEADER, NOT_LEADER)
                self._ready_term = term
            with self.log.lock:
                d = decision(self.log.state)
            if write and d.events and not await self.log.append(d.events, COMMIT_TIMEOUT_S):
                self._ready_term = -1
                return Decision().fail(R.SYSTEM_ERROR, "the controller could not commit the change to its Raft log")
            return d

    async def elect(self, req: ElectMasterRequestHeader) -> Decision:
        """CONTROLLER_ELECT_MASTER (broker, mqadmin or our own trigger); a new master is announced to the group."""
        unclean = self._config().enable_elect_unclean_master  # UPDATE_CONTROLLER_CONFIG may have changed it

        def decision(s: ControllerState) -> Decision:
            s.elect_unclean = unclean
            return s.elect_master(req, self.alive, self.heartbeats.live_info)

        d = await self.decide(decision, write=True)
        group = self.state.replicas.get(req.broker_name)
        self.elections.add(group.cluster_name if group else req.cluster_name, req.broker_name, d.code)
        if d.code == R.SUCCESS:
            _log.info("master elected", broker_name=req.broker_name, header=d.header)
            if self._config().notify_broker_role_changed:
                self._notify_role_changed(d)
        return d

    # -- liveness --------------------------------------------------------------------------------------------------

    def on_heartbeat(self, hb: Heartbeat, channel: Channel) -> None:
        if self.heartbeats.on_heartbeat(hb, channel):
            _log.info("broker registered its heartbeat", broker_name=hb.broker_name, broker_id=hb.broker_id)
        if channel.conn_id not in self._watched:
            self._watched.add(channel.conn_id)
            channel.add_close_callback(self._on_channel_closed)

    def _on_channel_closed(self, channel: Channel) -> None:
        self._watched.discard(channel.conn_id)
        key = self.heartbeats.on_channel_closed(channel)
        if key is not None:
            _log.info("broker connection closed", broker_name=key[1], broker_id=key[2])
            self._spawn(self.on_broker_inactive(key[1], key[2]))

    def scan_expired(self) -> None:
        for key, channel in self.heartbeats.expire():
            _log.warning("broker heartbeat expired", cluster=key[0], broker_name=key[1], broker_id=key[2])
            if channel is not None:
                self._watched.discard(getattr(channel, "conn_id", -1))
                close = getattr(channel, "close", None)
                if close is not None:
                    close()
            self._spawn(self.on_broker_inactive(key[1], key[2]))

    async def scan_inactive_masters(self) -> None:
        """Elect for groups whose master is not live while a replica is — once this controller has led long enough
        to have heard every broker: a new leader (or a restarted controller) starts with the heartbeats it got so
        far, and must not take a master it has not heard from yet for a dead one (J: the scan starts one interval
        after the leadership; here at least ``LEADER_GRACE_MS``)."""
        if not self.log.is_leader:
            self._scan_term = None
            return
        now = time.monotonic()
        if self._scan_term != self.log.term:
            self._scan_term, self._leader_since = self.log.term, now
        grace = max(self._config().scan_inactive_master_interval, LEADER_GRACE_MS) / 1000
        if now - self._leader_since < grace:
            return
        with self.log.lock:
            names = self.state.need_reelect(self.alive)
        for name in names:
            await self.trigger_election(name)

    async def on_broker_inactive(self, name: str, broker_id: int) -> None:
        """A broker went silent: if it was its group's master, elect another (leader only)."""
        if not self.log.is_leader:
            return
        with self.log.lock:
            info = self.state.sync_states.get(name)
            master = info.master_broker_id if info is not None else None
        if master == broker_id:
            await self.trigger_election(name)

    async def trigger_election(self, name: str) -> bool:
        req = ElectMasterRequestHeader(cluster_name="", broker_name=name, broker_id=-1, designate_elect=False)
        for attempt in range(self._config().elect_master_max_retry_count):
            d = await self.elect(req)
            if d.code == R.SUCCESS:
                return True
            _log.warning("controller-triggered election failed", broker_name=name, attempt=attempt, code=d.code)
            if d.code in (R.CONTROLLER_MASTER_NOT_AVAILABLE, R.CONTROLLER_NOT_LEADER):
                return False  # nothing to elect from, or no longer ours to do
        return False

    # -- role change notification ------------------------------------------------------------------------------------

    def _notify_role_changed(self, d: Decision) -> None:
        if self._notifier is None or not d.body:
            return
        head = ElectMasterResponseHeader.from_ext_fields(d.header)
        body = ElectMasterResponseBody.decode(d.body)
        members = body.broker_member_group
        if members is None or head.master_broker_id is None:
            return
        notify = NotifyBrokerRoleChangedRequestHeader(
            master_address=head.master_address,
            master_epoch=head.master_epoch,
            sync_state_set_epoch=head.sync_state_set_epoch,
            master_broker_id=head.master_broker_id,
        ).to_ext_fields()
        payload = SyncStateSet(
            sync_state_set=body.sync_state_set, sync_state_set_epoch=head.sync_state_set_epoch or 0
        ).encode()
        for broker_id, addr in members.broker_addrs.items():
            if addr and self.alive(members.cluster or "", members.broker_name or "", broker_id):
                cmd = RemotingCommand.request(RequestCode.NOTIFY_BROKER_ROLE_CHANGED, dict(notify), payload)
                self._spawn(self._send_notify(addr, cmd))

    async def _send_notify(self, addr: str, cmd: RemotingCommand) -> None:
        assert self._notifier is not None
        try:
            async with asyncio.timeout(3.0):
                await self._notifier.invoke_oneway(addr, cmd)
        except Exception as exc:  # a broker that went away meanwhile: it reads its role from the controller
            _log.warning("role change notify failed", broker_addr=addr, error=str(exc))
