"""``mqnamesrv`` / ``python -m namesrv``: parse RocketMQ's flags, load the config, run NamesrvApp on uvloop.

    mqnamesrv [-c namesrv.conf] [-p] [-n ignored]

``-p`` prints the effective config as ``key=value`` lines and exits 0. SIGINT/SIGTERM stop the server cleanly
(exit 0). A bad config file, an unusable KV file or a port that cannot be bound print one line on stderr and exit 1
— no traceback. On success the J start line "The Name Server boot success. serializeType=JSON" goes to stdout, as
scripts and container health checks wait for it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from namesrv.app import NamesrvApp
from namesrv.config import NamesrvConfig, format_config, load_config
from namesrv.kv_config import KvConfigError
from protocol.remoting.tls import TlsConfigError
from runtime.acl.rules import AclError
from runtime.daemon import config_file_main, serve
from runtime.logsetup import LogSettings

PROG = "mqnamesrv"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="RocketMQ-compatible name server",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="defaults (config keys; -p prints them all):\n"
        "  listenPort 9876 on listenAddress 0.0.0.0\n"
        "  kvConfigPath ~/namesrv/kvConfig.json, configStorePath ~/namesrv/namesrv.properties\n"
        "  logDir ~/logs/rocketmqlogs (namesrv.log, remoting.log)",
    )
    p.add_argument("-c", "--configFile", metavar="FILE", help="name server config file (Java properties)")
    p.add_argument("-p", "--printConfigItem", action="store_true", help="print all config items and exit")
    p.add_argument("-n", "--namesrvAddr", metavar="ADDR", help="accepted for compatibility; ignored")
    return p


def log_settings(cfg: NamesrvConfig) -> LogSettings:
    """The log keys (as the broker's) → ``namesrv.log`` + ``remoting.log``; logFileMaxSize=0 → stderr only."""
    return LogSettings.from_keys(cfg, main_file="namesrv.log")


async def _serve(cfg: NamesrvConfig) -> int:
    return await serve(
        NamesrvApp(cfg),
        prog=PROG,
        listen=f"{cfg.listen_address}:{cfg.listen_port}",
        banner=lambda: "The Name Server boot success. serializeType=JSON",
        start_errors=(KvConfigError, AclError, TlsConfigError),
    )


def _start(cfg: NamesrvConfig) -> tuple[LogSettings, str, Callable[[], Coroutine[Any, Any, int]]]:
    return log_settings(cfg), cfg.log_dir, lambda: _serve(cfg)


def main(argv: list[str] | None = None) -> int:
    return config_file_main(PROG, _parser().parse_args(argv), load_config, format_config, _start)


if __name__ == "__main__":
    sys.exit(main())
