"""``mqcontroller`` / ``python -m controller``: a standalone controller (J 5.5.0's ``mqcontroller`` flags).

    mqcontroller [-c controller.conf] [-p]

``-p`` prints the effective config as ``key=value`` lines and exits 0. SIGINT/SIGTERM stop it cleanly. A bad config
file or a port that cannot be bound print one line on stderr and exit 1. On success J's start line
"The Controller Server boot success. serializeType=JSON" goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from controller.app import ControllerApp
from controller.config import ControllerConfig, format_config, load_config
from runtime.daemon import config_file_main, serve
from runtime.logsetup import LogSettings

PROG = "mqcontroller"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="RocketMQ 5.x compatible controller (controller mode)")
    p.add_argument("-c", "--configFile", metavar="FILE", help="controller config file (Java properties)")
    p.add_argument("-p", "--printConfigItem", action="store_true", help="print all config items and exit")
    return p


async def _serve(cfg: ControllerConfig) -> int:
    app = ControllerApp(cfg)
    return await serve(
        app,
        prog=PROG,
        listen=app.peers.self_peer.rpc_addr if app.peers else f"{cfg.listen_address}:{cfg.listen_port}",
        banner=lambda: f"The Controller Server boot success. serializeType=JSON, address {app.addr}",
        start_errors=(ValueError,),
    )


def _start(cfg: ControllerConfig) -> tuple[LogSettings, str, Callable[[], Coroutine[Any, Any, int]]]:
    return LogSettings.from_keys(cfg, main_file="controller.log"), cfg.log_dir, lambda: _serve(cfg)


def main(argv: list[str] | None = None) -> int:
    return config_file_main(PROG, _parser().parse_args(argv), load_config, format_config, _start)


if __name__ == "__main__":
    sys.exit(main())
