"""The ``mqadmin`` sub-command table: ``@command(name, help, add_args)`` registers a coroutine under its lower-cased
RocketMQ name (``cli.main`` matches names case-insensitively), plus the ``-b``/``-c`` target options most broker
commands share. The command modules (``cli``, ``cli_ops``) register into it when imported."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable

from client.admin.admin_client import AdminClient
from client.errors import MQClientError

Command = Callable[[AdminClient, argparse.Namespace], Awaitable[int]]
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], object], Command]] = {}
NAMES: dict[str, str] = {}  # lower-cased name -> RocketMQ's spelling, for the command list


def command(
    name: str, help_text: str, args: Callable[[argparse.ArgumentParser], object]
) -> Callable[[Command], Command]:
    def deco(fn: Command) -> Command:
        COMMANDS[name.lower()] = (help_text, args, fn)
        NAMES[name.lower()] = name
        return fn

    return deco


def target_args(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("-b", "--brokerAddr", help="broker address ip:port")
    g.add_argument("-c", "--clusterName", help="cluster name")


async def target_brokers(admin: AdminClient, a: argparse.Namespace) -> list[str]:
    addrs = await admin.broker_addrs(getattr(a, "clusterName", None), getattr(a, "brokerAddr", None))
    if not addrs:
        raise MQClientError("no broker found (give -b brokerAddr or -c clusterName)")
    return addrs
