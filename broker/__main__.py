"""``mqbroker`` / ``python -m broker``: parse RocketMQ's flags, load the config, run BrokerApp on uvloop.

    mqbroker [-n "ns1:9876;ns2:9876"] [-c broker.conf] [--enable-proxy] [-p | -m]

The name-server list comes from ``-n``, else ``namesrvAddr`` in the config file, else the ``NAMESRV_ADDR``
environment variable (the only place the environment is read). ``-p`` prints every effective config item as
``key=value`` and exits 0; ``-m`` prints the important ones. SIGINT/SIGTERM stop the broker cleanly (exit 0). A bad
config, an unusable store or a port that cannot be bound print one line on stderr and exit 1 — no traceback. On
success J's start line goes to stdout, as scripts and health checks wait for it:
``The broker[broker-a, 127.0.0.1:10911] boot success. serializeType=JSON and name server is 127.0.0.1:9876``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from broker.app import BrokerApp, BrokerStartError
from broker.config import BrokerConfig, format_config, load_config
from protocol import build
from runtime.daemon import daemon_main, serve
from runtime.logsetup import LogSettings

PROG = "mqbroker"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="RocketMQ-compatible broker",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="defaults (broker.conf keys; -p prints them all):\n"
        "  listenPort 10911 on bindAddress 0.0.0.0, haListenPort listenPort+1, grpcServerPort 8081 (--enable-proxy)\n"
        "  storePathRootDir ~/store (commit log in ~/store/commitlog)\n"
        "  logDir ~/logs/rocketmqlogs (broker.log, store.log, remoting.log)\n"
        "  name server: -n, else namesrvAddr, else $NAMESRV_ADDR",
    )
    p.add_argument("-n", "--namesrvAddr", metavar="ADDR", help='name server address list, e.g. "ns1:9876;ns2:9876"')
    p.add_argument("-c", "--configFile", metavar="FILE", help="broker config file (Java properties, broker.conf)")
    p.add_argument(
        "--enable-proxy",
        action="store_true",
        help="also serve RocketMQ 5 gRPC clients in this process (grpcServerPort, default 8081)",
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument("-p", "--printConfigItem", action="store_true", help="print all config items and exit")
    group.add_argument("-m", "--printImportantConfig", action="store_true", help="print important config items")
    return p


def resolve_config(args: argparse.Namespace, environ: dict[str, str] | None = None) -> BrokerConfig:
    environ = dict(os.environ) if environ is None else environ
    overrides: dict[str, Any] = {}
    if args.namesrvAddr:
        overrides["namesrvAddr"] = args.namesrvAddr
    if getattr(args, "enable_proxy", False):
        overrides["enableProxy"] = True
    cfg = load_config(args.configFile, overrides)
    if not cfg.namesrv.namesrv_addr and environ.get("NAMESRV_ADDR"):
        # the same file again: its warning line was printed by the first load
        cfg = load_config(args.configFile, {**overrides, "namesrvAddr": environ["NAMESRV_ADDR"]}, warn=lambda _: None)
    return cfg


def log_settings(cfg: BrokerConfig) -> LogSettings:
    """``logDir``/``logLevel``/``logFormat``/``logFileMaxSize``/``logFileMaxIndex`` → the daemon's log setup
    (``broker.log`` + ``store.log`` + ``remoting.log``; logFileMaxSize=0 → stderr only)."""
    return LogSettings.from_keys(cfg.observability, main_file="broker.log")


async def _serve(cfg: BrokerConfig) -> int:
    app = BrokerApp(cfg)  # built on the running loop
    return await serve(
        app,
        prog=PROG,
        listen=f"{cfg.network.bind_address}:{cfg.network.listen_port}",
        banner=lambda: (
            f"The broker[{cfg.identity.broker_name}, {app.addr}] boot success. serializeType=JSON"
            f" and name server is {cfg.namesrv.namesrv_addr} (modules: {build.describe()})"
        ),
        start_errors=(BrokerStartError,),
    )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return daemon_main(
        PROG,
        lambda: resolve_config(args),
        lambda cfg: (
            format_config(cfg, important_only=bool(args.printImportantConfig))
            if args.printConfigItem or args.printImportantConfig
            else None
        ),
        lambda cfg: (log_settings(cfg), cfg.observability.log_dir, lambda: _serve(cfg)),
    )


if __name__ == "__main__":
    sys.exit(main())
