"""The ACL request hook a ``RemotingServer`` runs before dispatch, and the watcher that keeps its rules current.

``AclHook(rules)`` is called by the connection for every request (never for responses) as ``hook(conn, cmd)``: it
returns ``None`` to let the request through or the reply to send instead. A refusal is J's reply (docs/reference/acl.md
§6): code SYSTEM_ERROR (1), remark ``org.apache.rocketmq.acl.common.AclException: <reason>, <frame>``; for an
ACL 2.0 user, RocketMQ 5.3's: NO_PERMISSION (16) with the bare reason.

``AclWatcher`` polls the ACL files of one home directory every ``interval_s`` (J 4.9.3+: 5 s, by mtime) and swaps
the hook's rules on a change. A file that does not load keeps the previous rules and logs one line per change.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import structlog

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting.handler import Channel
from runtime.acl.auth2 import auth_path
from runtime.acl.code_rules import RecordTopic
from runtime.acl.files import AclConfig, acl_files
from runtime.acl.rules import AclError, AclRules, host_of
from runtime.tasks import stop_tasks

_log = structlog.get_logger("rocketq.acl")

RequestHook = Callable[[Channel, RemotingCommand], RemotingCommand | None]


# The name server's write codes: with accounts configured there, only a signed admin account may send them; every
# other request (route reads) passes unchecked so unmodified clients keep working.
NAMESRV_WRITE_CODES: frozenset[int] = frozenset(
    {
        RequestCode.REGISTER_BROKER,
        RequestCode.UNREGISTER_BROKER,
        RequestCode.PUT_KV_CONFIG,
        RequestCode.DELETE_KV_CONFIG,
        RequestCode.WIPE_WRITE_PERM_OF_BROKER,
        RequestCode.ADD_WRITE_PERM_OF_BROKER,
        RequestCode.DELETE_TOPIC_IN_NAMESRV,
        RequestCode.UPDATE_NAMESRV_CONFIG,
    }
)


class AclHook:
    """The check itself; ``rules`` may be replaced at any time (hot reload). With ``only_codes`` set, requests with
    any other code pass unchecked (the name server's mode)."""

    __slots__ = ("_hosts", "denied", "only_codes", "record_topic", "rules")

    def __init__(self, rules: AclRules, only_codes: frozenset[int] | None = None) -> None:
        self.rules = rules
        self.only_codes = only_codes
        # commit-log offset → topic of the record there: the broker sets it (codes whose resource is a record)
        self.record_topic: RecordTopic | None = None
        self.denied = 0
        self._hosts: dict[str, str] = {}  # peer → ip: one entry per connection, cleared when it grows

    def __call__(self, conn: Channel, cmd: RemotingCommand) -> RemotingCommand | None:
        if self.only_codes is not None and cmd.code not in self.only_codes:
            return None
        peer = conn.peer
        host = self._hosts.get(peer)
        if host is None:
            if len(self._hosts) >= 4096:
                self._hosts.clear()
            host = self._hosts[peer] = host_of(peer)
        try:
            self.rules.check(host, cmd, self.record_topic)
        except AclError as exc:
            self.denied += 1
            # the first refusals of each connection are logged, then one in a thousand: a flood logs little
            n = getattr(conn, "acl_refused", 0) + 1
            setattr(conn, "acl_refused", n)  # noqa: B010 - Channel is a Protocol without this attribute
            if n <= 3 or n % 1000 == 0:
                _log.info(
                    "request refused by ACL", peer=conn.peer, code=cmd.code, reason=str(exc)[:200], refused=self.denied
                )
            if exc.acl2:  # an ACL 2.0 user: RocketMQ 5.3's AbortProcessException(NO_PERMISSION, message)
                return cmd.make_response(ResponseCode.NO_PERMISSION, str(exc))
            return cmd.make_response(ResponseCode.SYSTEM_ERROR, exc.remark)
        return None


def _stamp(home: Path) -> tuple[tuple[str, int, int], ...]:
    out = []
    for p in [*acl_files(home), auth_path(home)]:
        try:
            st = p.stat()
        except OSError:
            continue
        out.append((str(p), st.st_mtime_ns, st.st_size))
    return tuple(out)


class AclWatcher:
    """Loads the ACL files of ``home`` and reloads them on change. ``config`` is the current ``AclConfig``."""

    def __init__(
        self,
        home: str | os.PathLike[str],
        hook: AclHook | None = None,
        *,
        interval_s: float = 5.0,
        admin_codes: frozenset[int] | None = None,
        only_codes: frozenset[int] | None = None,
    ) -> None:
        self.home = Path(home)
        self._admin_codes = admin_codes
        self.config = AclConfig.load(self.home, admin_codes)  # AclError: the server must not start
        self._stamp = _stamp(self.home)
        self.hook = hook or AclHook(self.config.rules, only_codes)
        self.hook.rules = self.config.rules
        self.interval_s = interval_s
        self._task: asyncio.Task[None] | None = None
        self.reloads = 0
        self.failures = 0

    def start(self) -> None:
        if self._task is None and self.interval_s > 0:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="acl-watch")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_tasks(task)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            self.check_now()

    def check_now(self) -> bool:
        """Reload when any ACL file changed; True when new rules were applied."""
        stamp = _stamp(self.home)
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        return self.reload()

    def reload(self) -> bool:
        try:
            config = AclConfig.load(self.home, self._admin_codes)
        except AclError as exc:
            self.failures += 1
            _log.warning("ACL files not reloaded, the previous rules stay", home=str(self.home), reason=str(exc))
            return False
        self.config = config
        self.hook.rules = config.rules
        self._stamp = _stamp(self.home)
        self.reloads += 1
        _log.info("ACL rules reloaded", home=str(self.home), accounts=len(config.rules.accounts))
        return True
