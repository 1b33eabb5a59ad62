"""``mqadmin`` ACL 2.0 commands (RocketMQ 5.3+ tools' names and flags; ``-b broker`` or ``-c cluster``), over the
auth admin codes 3001–3010 (``broker.handlers.admin_auth``).

============ ================================================= =====================================
command      flags                                             request
============ ================================================= =====================================
createUser   -u username* -p password* -t Super|Normal         AUTH_CREATE_USER (3001)
updateUser   -u username* -p password -t userType -s status    AUTH_UPDATE_USER (3002)
deleteUser   -u username*                                      AUTH_DELETE_USER (3003)
getUser      -u username*                                      AUTH_GET_USER (3004)
listUser     -f filter                                         AUTH_LIST_USER (3005)
createAcl    -s User:<name>* -r "Topic:t,Group:g"* -a "Pub,Sub"* AUTH_CREATE_ACL (3006)
             -d Allow|Deny* -i "10.0.0.*,…"
updateAcl    as createAcl                                      AUTH_UPDATE_ACL (3007)
deleteAcl    -s subject* -r resource                           AUTH_DELETE_ACL (3008)
getAcl       -s subject*                                       AUTH_GET_ACL (3009)
listAcl      -s subjectFilter -r resourceFilter                AUTH_LIST_ACL (3010)
============ ================================================= =====================================

Each prints ``<verb> … to/from <addr> success.`` per broker, or the JSON the broker answered (reads).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from client.admin.admin_client import AdminClient
from client.admin.cli_acl import _need_target
from client.admin.registry import command, target_args, target_brokers
from protocol.codes import RequestCode


def _csv(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


async def _each(admin: AdminClient, a: argparse.Namespace, code: int, ext: dict[str, str], body: Any, done: str) -> int:
    _need_target(a)
    raw = json.dumps(body).encode() if body is not None else b""
    for addr in await target_brokers(admin, a):
        await admin.call(addr, code, {k: v for k, v in ext.items() if v}, raw)
        print(f"{done} {addr} success.")
    return 0


async def _show(admin: AdminClient, a: argparse.Namespace, code: int, ext: dict[str, str]) -> int:
    _need_target(a)
    for addr in await target_brokers(admin, a):
        r = await admin.call(addr, code, {k: v for k, v in ext.items() if v})
        if r.body:
            print(json.dumps(json.loads(r.body), indent=2))
            break
    return 0


def _args(*flags: tuple[str, str, bool]) -> Callable[[argparse.ArgumentParser], None]:
    def add(p: argparse.ArgumentParser) -> None:
        target_args(p)
        for flag, dest, required in flags:
            p.add_argument(flag, dest=dest, required=required)

    return add


_USER = ("-u", "username", True)


@command("createUser", "Create user to cluster.", _args(_USER, ("-p", "password", True), ("-t", "userType", False)))
async def create_user(admin: AdminClient, a: argparse.Namespace) -> int:
    body = {"username": a.username, "password": a.password, "userType": a.userType or "Normal"}
    return await _each(admin, a, RequestCode.AUTH_CREATE_USER, {"username": a.username}, body, "create user to")


@command(
    "updateUser",
    "Update user to cluster.",
    _args(_USER, ("-p", "password", False), ("-t", "userType", False), ("-s", "userStatus", False)),
)
async def update_user(admin: AdminClient, a: argparse.Namespace) -> int:
    body = {k: v for k, v in (("password", a.password), ("userType", a.userType), ("userStatus", a.userStatus)) if v}
    return await _each(admin, a, RequestCode.AUTH_UPDATE_USER, {"username": a.username}, body, "update user to")


@command("deleteUser", "Delete user from cluster.", _args(_USER))
async def delete_user(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _each(admin, a, RequestCode.AUTH_DELETE_USER, {"username": a.username}, None, "delete user from")


@command("getUser", "Get user from cluster.", _args(_USER))
async def get_user(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _show(admin, a, RequestCode.AUTH_GET_USER, {"username": a.username})


@command("listUser", "List user from cluster.", _args(("-f", "filter", False)))
async def list_user(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _show(admin, a, RequestCode.AUTH_LIST_USER, {"filter": a.filter or ""})


_ACL = _args(
    ("-s", "subject", True),
    ("-r", "resources", True),
    ("-a", "actions", True),
    ("-d", "decision", True),
    ("-i", "sourceIp", False),
)


def _acl_body(a: argparse.Namespace) -> dict[str, Any]:
    entries = [
        {"resource": r, "actions": _csv(a.actions), "sourceIps": _csv(a.sourceIp), "decision": a.decision}
        for r in _csv(a.resources)
    ]
    return {"subject": a.subject, "policies": [{"policyType": "Custom", "entries": entries}]}


@command("createAcl", "Create acl to cluster.", _ACL)
async def create_acl(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _each(admin, a, RequestCode.AUTH_CREATE_ACL, {"subject": a.subject}, _acl_body(a), "create acl to")


@command("updateAcl", "Update acl to cluster.", _ACL)
async def update_acl(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _each(admin, a, RequestCode.AUTH_UPDATE_ACL, {"subject": a.subject}, _acl_body(a), "update acl to")


@command("deleteAcl", "Delete acl from cluster.", _args(("-s", "subject", True), ("-r", "resources", False)))
async def delete_acl(admin: AdminClient, a: argparse.Namespace) -> int:
    ext = {"subject": a.subject, "resource": a.resources or ""}
    return await _each(admin, a, RequestCode.AUTH_DELETE_ACL, ext, None, "delete acl from")


@command("getAcl", "Get acl from cluster.", _args(("-s", "subject", True)))
async def get_acl(admin: AdminClient, a: argparse.Namespace) -> int:
    return await _show(admin, a, RequestCode.AUTH_GET_ACL, {"subject": a.subject})


@command("listAcl", "List acl from cluster.", _args(("-s", "subject", False), ("-r", "resource", False)))
async def list_acl(admin: AdminClient, a: argparse.Namespace) -> int:
    ext = {"subjectFilter": a.subject or "", "resourceFilter": a.resource or ""}
    return await _show(admin, a, RequestCode.AUTH_LIST_ACL, ext)
