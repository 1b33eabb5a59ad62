"""A daemon's config as it is now (``LiveConfig``), and the two requests that read and change it at runtime
(``ConfigHandlers``): the name server's GET/UPDATE_NAMESRV_CONFIG and the controller's GET/UPDATE_CONTROLLER_CONFIG.

GET answers the effective config as ``key=value`` lines (J ``getAllConfigsFormatString``). UPDATE takes a properties
body and applies all of it or none, through the daemon's own rule (its allow-list, then its key table):

=============================== ================ =================================================================
update                          code             remark
=============================== ================ =================================================================
empty body                      SUCCESS          — (nothing changes)
body not UTF-8 / a bad line     SYSTEM_ERROR     config update body is not UTF-8 / the line named
a key the daemon refuses        NO_PERMISSION    the daemon's (``ConfigUpdateRefused``), logged as a warning
a bad value                     SYSTEM_ERROR     the daemon's (``ConfigError``)
applied                         SUCCESS          — (logged with the keys)
=============================== ================ =================================================================

Nothing is written to disk: an update lives until the process restarts, so a runtime request can never choose or fill
a file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting.handler import Handler, HandlerError, RequestContext
from runtime.config_loader import ConfigError, ConfigUpdateRefused, parse_properties

C = TypeVar("C")


class LiveConfig(Generic[C]):
    """The current config, replaced by ``change``; readers call ``.current`` (or the object) each time."""

    def __init__(self, cfg: C, apply: Callable[[C, Mapping[str, str]], C], text: Callable[[C], str]) -> None:
        self._cfg = cfg
        self._apply = apply
        self._text = text

    @property
    def current(self) -> C:
        return self._cfg

    def __call__(self) -> C:
        return self._cfg

    def change(self, props: Mapping[str, str]) -> C:
        """Apply all of ``props`` or none: refused keys raise ConfigUpdateRefused, bad values ConfigError."""
        self._cfg = self._apply(self._cfg, props)
        return self._cfg

    def text(self) -> str:
        """The config as ``key=value`` lines."""
        return self._text(self._cfg)


class ConfigHandlers:
    """GET and UPDATE of one daemon's ``LiveConfig`` under that daemon's request codes; ``what`` names it in logs."""

    def __init__(self, config: LiveConfig[Any], *, get_code: int, update_code: int, what: str) -> None:
        self._config = config
        self._codes = (get_code, update_code)
        self._what = what

    def table(self) -> dict[int, Handler]:
        get_code, update_code = self._codes
        return {get_code: self.get_config, update_code: self.update_config}

    async def get_config(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=self._config.text().encode())

    async def update_config(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        if not cmd.body:
            return cmd.make_response()
        try:
            props = {key: value for _no, key, value in parse_properties(cmd.body.decode("utf-8"), "request body")}
            self._config.change(props)
        except UnicodeDecodeError:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, "config update body is not UTF-8") from None
        except ConfigUpdateRefused as exc:
            ctx.log.warning(f"{self._what} update refused", peer=ctx.conn.peer, reason=str(exc))
            raise HandlerError(ResponseCode.NO_PERMISSION, str(exc)) from None
        except ConfigError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, str(exc)) from None
        ctx.log.info(f"{self._what} updated", peer=ctx.conn.peer, keys=sorted(props))
        return cmd.make_response()
