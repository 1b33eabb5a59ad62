"""ACL 2.0 (RocketMQ 5.3+): users and their ACL policies — the model, the decision for one request, and the file
that holds them. Pure apart from reading and writing that one file.

File ``<rocketmqHome>/conf/auth.json`` (written atomically by the auth admin codes 3001–3010)::

    {"users": [UserInfo, ...], "acls": [AclInfo, ...]}
    UserInfo = {"username", "password", "userType": "Super" | "Normal", "userStatus": "enable" | "disable"}
    AclInfo  = {"subject": "User:<name>", "policies": [{"policyType": "Custom" | "Default",
                "entries": [{"resource": "Topic:t" | "Topic:t*" | "Group:*" | "*" ..., "actions": ["Pub", "Sub",
                             "Create", "Update", "Delete", "Get", "List", "All"], "sourceIps": ["10.0.0.*"],
                             "decision": "Allow" | "Deny"}]}]}

(RocketMQ keeps them in RocksDB; the JSON shapes are its ``UserInfo`` / ``AclInfo`` bodies.)

Decision (J ``AclAuthorizationHandler``) for one (resource, action) of a user: the entries of the ``Custom`` policy
that match the resource, the action (``All`` matches every action; a request for ``Any`` — PUB or SUB — matches
any entry) and the source address; if none, those of the ``Default`` policy; none at all → refused ("no matched
policies"). Among the matches the most specific resource wins — a literal name over a prefix (``t*``, longer
first) over ``<Type>:*`` over ``*`` — and on a tie ``Deny`` wins. The chosen entry's decision is the answer.
A ``Super`` user skips every check (and may send the admin-only codes); a disabled user cannot sign in.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from runtime.acl.code_rules import ANY, PUB, RETRY_PREFIX, SUB

AUTH_FILE: Final = "conf/auth.json"
ACTIONS: Final = ("All", "Any", "Pub", "Sub", "Create", "Update", "Delete", "Get", "List")
_LITERAL, _PREFIXED, _TYPE_ANY, _ANY = 0, 1, 2, 3  # specificity, most specific first


class AuthError(ValueError):
    """A user or ACL that cannot be stored, or a request ACL 2.0 refuses; the text says why."""


def _action(name: str) -> str:
    for a in ACTIONS:
        if a.lower() == name.strip().lower():
            return a
    raise AuthError(f"unknown action {name!r} (expected one of {', '.join(ACTIONS)})")


@dataclass(frozen=True, slots=True)
class Entry:
    """One compiled policy entry."""

    kind: str  # Topic | Group | Cluster | "" (any type)
    name: str  # literal name, prefix (without ``*``) or ""
    pattern: int  # _LITERAL | _PREFIXED | _TYPE_ANY | _ANY
    actions: frozenset[str]
    source_ips: tuple[str, ...]
    allow: bool
    custom: bool

    def matches(self, kind: str, name: str, action: str, ip: str, ip_ok: Any) -> bool:
        if self.pattern != _ANY and self.kind != kind:
            return False
        if self.pattern == _LITERAL and self.name != name:
            return False
        if self.pattern == _PREFIXED and not name.startswith(self.name):
            return False
        if action == "Any":
            if not self.actions:
                return False
        elif action not in self.actions and "All" not in self.actions:
            return False
        return not self.source_ips or any(ip_ok(p, ip) for p in self.source_ips)

    def rank(self) -> tuple[int, int, int]:
        return (self.pattern, -len(self.name), 0 if not self.allow else 1)


def parse_resource(text: str) -> tuple[str, str, int]:
    """``Topic:t`` / ``Topic:t*`` / ``Topic:*`` / ``*`` → (type, name, pattern)."""
    t = text.strip()
    if t == "*":
        return "", "", _ANY
    kind, sep, name = t.partition(":")
    kind = kind.strip().capitalize()
    if not sep or kind not in ("Topic", "Group", "Cluster"):
        raise AuthError(f"resource {text!r} is not Topic:<name>, Group:<name>, Cluster:<name> or *")
    name = name.strip()
    if name == "*":
        return kind, "", _TYPE_ANY
    if name.endswith("*"):
        return kind, name[:-1], _PREFIXED
    if not name:
        raise AuthError(f"resource {text!r} has no name")
    return kind, name, _LITERAL


def compile_acl(acl: dict[str, Any]) -> tuple[Entry, ...]:
    """The entries of one AclInfo; AuthError when one cannot be read."""
    out: list[Entry] = []
    for policy in acl.get("policies") or []:
        custom = str(policy.get("policyType") or "Custom").lower() != "default"
        for e in policy.get("entries") or []:
            kind, name, pattern = parse_resource(str(e.get("resource", "")))
            actions = frozenset(_action(str(a)) for a in e.get("actions") or [])
            decision = str(e.get("decision") or "").strip().lower()
            if decision not in ("allow", "deny"):
                raise AuthError(f"decision {e.get('decision')!r} is not Allow or Deny")
            ips = tuple(str(ip) for ip in e.get("sourceIps") or [])
            out.append(Entry(kind, name, pattern, actions, ips, decision == "allow", custom))
    return tuple(out)


def _resource_of(resource: str) -> tuple[str, str]:
    """A resource of the rule table (topic, or ``%RETRY%<group>``) as an ACL 2.0 (type, name)."""
    if resource.startswith(RETRY_PREFIX):
        return "Group", resource[len(RETRY_PREFIX) :]
    return "Topic", resource


def _action_of(perm: int) -> str:
    if perm & ANY:
        return "Any"
    if perm & PUB:
        return "Pub"
    if perm & SUB:
        return "Sub"
    return "Any"


def decide(entries: tuple[Entry, ...], resource: str, perm: int, ip: str, ip_ok: Any) -> str | None:
    """None when ``entries`` allow ``perm`` on ``resource`` (a rule-table resource) from ``ip``, else the reason."""
    kind, name = _resource_of(resource)
    action = _action_of(perm)
    for custom in (True, False):
        found = [e for e in entries if e.custom is custom and e.matches(kind, name, action, ip, ip_ok)]
        if found:
            best = min(found, key=Entry.rank)
            return None if best.allow else f"{kind}:{name}, the decision is deny"
    return f"{kind}:{name}, no matched policies"


# -- the file ---------------------------------------------------------------------------------------------------------


def auth_path(home: str | os.PathLike[str]) -> Path:
    return Path(home) / AUTH_FILE


def load_doc(home: str | os.PathLike[str]) -> dict[str, list[dict[str, Any]]]:
    """The users and ACLs under ``home`` (empty when there is no file); AuthError when it does not parse."""
    path = auth_path(home)
    if not path.is_file():
        return {"users": [], "acls": []}
    try:
        doc = json.loads(path.read_text() or "{}")
    except (OSError, ValueError) as exc:
        raise AuthError(f"{path}: {exc}") from None
    if not isinstance(doc, dict):
        raise AuthError(f"{path}: not a JSON object")
    users = [u for u in doc.get("users") or [] if isinstance(u, dict)]
    acls = [a for a in doc.get("acls") or [] if isinstance(a, dict)]
    return {"users": users, "acls": acls}


def save_doc(home: str | os.PathLike[str], doc: dict[str, list[dict[str, Any]]]) -> None:
    """Write atomically (temporary file, fsync, rename)."""
    path = auth_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)


def user_info(raw: dict[str, Any], username: str) -> dict[str, Any]:
    """A UserInfo as stored: the header's username, a non-empty password, userType Super|Normal, status."""
    password = raw.get("password")
    if not password:
        raise AuthError("The password is blank")
    kind = str(raw.get("userType") or "Normal").strip().capitalize()
    if kind not in ("Super", "Normal"):
        raise AuthError(f"userType {raw.get('userType')!r} is not Super or Normal")
    status = str(raw.get("userStatus") or "enable").strip().lower()
    if status not in ("enable", "disable"):
        raise AuthError(f"userStatus {raw.get('userStatus')!r} is not enable or disable")
    return {"username": username, "password": str(password), "userType": kind, "userStatus": status}


def subject_name(subject: str) -> str:
    """``User:alice`` → ``alice``; AuthError for any other subject type."""
    kind, sep, name = subject.strip().partition(":")
    if not sep or kind.strip().lower() != "user" or not name.strip():
        raise AuthError(f"subject {subject!r} is not User:<name>")
    return name.strip()


def public_user(u: dict[str, Any]) -> dict[str, Any]:
    """A UserInfo as answered to GET/LIST (RocketMQ answers the password too; this broker does not)."""
    return {k: v for k, v in u.items() if k != "password"}
