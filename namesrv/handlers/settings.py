"""GET_NAMESRV_CONFIG and UPDATE_NAMESRV_CONFIG.

GET answers the effective config as ``key=value`` lines (J ``getAllConfigsFormatString``). UPDATE takes a
properties body and applies it only if every key is on the runtime allow-list (``namesrv.config.RUNTIME_KEYS``):
paths are refused with J's NO_PERMISSION "Can not update config path" plus the key (CVE-2023-37582), other keys with
NO_PERMISSION naming the key, bad values with SYSTEM_ERROR. Nothing is written to disk: the update lives until the
process restarts, so a runtime request can never choose or fill a file.
"""

from __future__ import annotations

from namesrv.config import ConfigError, ConfigUpdateRefused, LiveConfig, format_config, parse_properties
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import Handler, HandlerError, RequestContext


class ConfigHandlers:
    def __init__(self, config: LiveConfig) -> None:
        self._config = config

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.GET_NAMESRV_CONFIG: self.get_config,
            RequestCode.UPDATE_NAMESRV_CONFIG: self.update_config,
        }

    async def get_config(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=format_config(self._config.current).encode())

    async def update_config(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        if not cmd.body:
            return cmd.make_response()
        try:
            text = cmd.body.decode("utf-8")
            props = {key: value for _no, key, value in parse_properties(text, "request body")}
            self._config.update(props)
        except UnicodeDecodeError:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, "config update body is not UTF-8") from None
        except ConfigUpdateRefused as exc:
            ctx.log.warning("config update refused", peer=ctx.conn.peer, reason=str(exc))
            raise HandlerError(ResponseCode.NO_PERMISSION, str(exc)) from None
        except ConfigError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, str(exc)) from None
        ctx.log.info("config updated", peer=ctx.conn.peer, keys=sorted(props))
        return cmd.make_response()
