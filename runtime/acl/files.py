"""The ``plain_acl.yml`` files (J 4.9.3+ multi-file layout): find, read, compile into ``AclRules``, and write back
admin updates atomically to the file that owns the account. Synchronous file IO only; the watcher that polls these
files lives in ``runtime.acl.hook``.

Files, in load order (docs/reference/acl.md §1): every ``*.yml`` / ``*.yaml`` under ``<home>/conf/acl/`` (recursive,
sorted, ``tools.yml`` skipped), then ``<home>/conf/plain_acl.yml`` (the default file, where new accounts go). An
``accessKey`` belongs to the first file that declares it; later duplicates are ignored with a warning. The global
whitelist is the union over all files.

File schema::

    globalWhiteRemoteAddresses: [pattern, ...]                 # optional
    accounts:
      - {accessKey, secretKey, whiteRemoteAddress, admin, defaultTopicPerm, defaultGroupPerm,
         topicPerms: ["t=PUB|SUB", ...], groupPerms: ["g=SUB", ...]}
    dataVersion: [{timestamp: <ms>, counter: <n>}]             # bumped by every admin update
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from runtime.acl.auth2 import AuthError, Entry, compile_acl, load_doc, subject_name
from runtime.acl.rules import Account, AclError, AclRules, parse_address_pattern

DEFAULT_FILE = "conf/plain_acl.yml"
ACL_DIR = "conf/acl"


def acl_files(home: str | os.PathLike[str]) -> list[Path]:
    """Every ACL file under ``home`` in load order (the default file last, when it exists)."""
    root = Path(home)
    out: list[Path] = []
    acl_dir = root / ACL_DIR
    if acl_dir.is_dir():
        for p in sorted(acl_dir.rglob("*")):
            if p.suffix in (".yml", ".yaml") and p.name != "tools.yml" and p.is_file():
                out.append(p)
    default = root / DEFAULT_FILE
    if default.is_file() and default not in out:
        out.append(default)
    return out


def _account(raw: Any, where: Path) -> Account:
    if not isinstance(raw, dict):
        raise AclError(f"{where}: an account must be a mapping")

    def s(key: str) -> str | None:
        v = raw.get(key)
        return None if v is None else str(v)

    def lst(key: str) -> list[str]:
        v = raw.get(key)
        if v is None:
            return []
        if isinstance(v, str):
            return [x for x in v.split(",") if x.strip()]
        if not isinstance(v, list):
            raise AclError(f"{where}: {key} must be a list")
        return [str(x) for x in v]

    admin = raw.get("admin", False)
    return Account.build(
        s("accessKey") or "",
        s("secretKey") or "",
        white_remote_address=s("whiteRemoteAddress"),
        admin=admin is True or str(admin).lower() == "true",
        default_topic_perm=s("defaultTopicPerm"),
        default_group_perm=s("defaultGroupPerm"),
        topic_perms=lst("topicPerms"),
        group_perms=lst("groupPerms"),
    )


@dataclass(slots=True)
class AclFile:
    path: Path
    global_white: list[str] = field(default_factory=list)
    accounts: list[Account] = field(default_factory=list)
    version: dict[str, int] = field(default_factory=lambda: {"timestamp": 0, "counter": 0})

    @classmethod
    def read(cls, path: Path) -> AclFile:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise AclError(f"{path}: cannot be read: {str(exc).splitlines()[0]}") from None
        if not isinstance(data, dict):
            raise AclError(f"{path}: the top level must be a mapping")
        white = data.get("globalWhiteRemoteAddresses") or []
        if not isinstance(white, list):
            raise AclError(f"{path}: globalWhiteRemoteAddresses must be a list")
        for w in white:
            parse_address_pattern(str(w))
        accounts = [_account(a, path) for a in (data.get("accounts") or [])]
        version = {"timestamp": 0, "counter": 0}
        dv = data.get("dataVersion")
        if isinstance(dv, list) and dv and isinstance(dv[0], dict):
            version = {"timestamp": int(dv[0].get("timestamp", 0)), "counter": int(dv[0].get("counter", 0))}
        return cls(path, [str(w) for w in white], accounts, version)

    def to_yaml(self) -> str:
        accounts = []
        for a in self.accounts:
            d: dict[str, Any] = {"accessKey": a.access_key, "secretKey": a.secret_key}
            if a.white_remote_address:
                d["whiteRemoteAddress"] = a.white_remote_address
            d["admin"] = a.admin
            d["defaultTopicPerm"] = a.default_topic_perm
            d["defaultGroupPerm"] = a.default_group_perm
            if a.topic_perms:
                d["topicPerms"] = list(a.topic_perms)
            if a.group_perms:
                d["groupPerms"] = list(a.group_perms)
            accounts.append(d)
        doc = {"globalWhiteRemoteAddresses": self.global_white, "accounts": accounts, "dataVersion": [self.version]}
        return str(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))

    def write(self) -> None:
        """Bump the data version and replace the file atomically (tmp + fsync + rename)."""
        self.version = {"timestamp": int(time.time() * 1000), "counter": self.version["counter"] + 1}
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(self.to_yaml())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


def _add_users(root: Path, accounts: dict[str, Account]) -> None:
    """The enabled ACL 2.0 users of ``<home>/conf/auth.json`` with their policies (``runtime.acl.auth2``); an
    ACL 1.0 account of the same key wins. AclError when the file or an ACL in it cannot be read."""
    try:
        doc = load_doc(root)
        policies: dict[str, list[Entry]] = {}
        for acl in doc["acls"]:
            policies.setdefault(subject_name(str(acl.get("subject", ""))), []).extend(compile_acl(acl))
    except AuthError as exc:
        raise AclError(str(exc)) from None
    for u in doc["users"]:
        name = str(u.get("username") or "")
        if not name or name in accounts:
            continue
        accounts[name] = Account.user(
            name,
            str(u.get("password") or ""),
            super_user=str(u.get("userType", "Normal")).lower() == "super",
            policy=tuple(policies.get(name, ())),
            disabled=str(u.get("userStatus", "enable")).lower() == "disable",
        )


@dataclass(slots=True)
class AclConfig:
    """Every ACL file of one home directory, and the rules compiled from them."""

    home: Path
    files: list[AclFile]
    rules: AclRules
    owner: dict[str, AclFile]
    warn: Callable[[str], None] | None = None

    @classmethod
    def load(cls, home: str | os.PathLike[str], admin_codes: frozenset[int] | None = None) -> AclConfig:
        """Read and compile every file; AclError (naming the file) when any is invalid."""
        root = Path(home)
        files = [AclFile.read(p) for p in acl_files(root)]
        accounts: dict[str, Account] = {}
        owner: dict[str, AclFile] = {}
        white: list[str] = []
        for f in files:
            white.extend(w for w in f.global_white if w not in white)
            for a in f.accounts:
                if a.access_key in accounts:
                    continue  # J: the first file loaded wins
                accounts[a.access_key] = a
                owner[a.access_key] = f
        _add_users(root, accounts)
        patterns = tuple(parse_address_pattern(w) for w in white)
        rules = AclRules(accounts, patterns) if admin_codes is None else AclRules(accounts, patterns, admin_codes)
        return cls(root, files, rules, owner)

    @property
    def default_file(self) -> AclFile:
        path = self.home / DEFAULT_FILE
        for f in self.files:
            if f.path == path:
                return f
        path.parent.mkdir(parents=True, exist_ok=True)
        f = AclFile(path)
        self.files.append(f)
        return f

    def file_for(self, path: str) -> AclFile:
        """The ACL file named by ``path`` ("" = the default file); it must be a loaded .yml file under home."""
        if not path:
            return self.default_file
        p = Path(path).resolve()
        for f in self.files:
            if f.path.resolve() == p:
                return f
        raise AclError(f"The aclFileFullPath {path} is not an ACL file under {self.home}")

    def upsert(self, account: Account) -> AclFile:
        """Create or replace an account in the file that owns its key (new keys: the default file)."""
        f = self.owner.get(account.access_key) or self.default_file
        f.accounts = [a for a in f.accounts if a.access_key != account.access_key] + [account]
        f.write()
        return f

    def delete(self, access_key: str) -> AclFile:
        f = self.owner.get(access_key)
        if f is None:
            raise AclError(f"The accesskey[{access_key}] corresponding to accessConfig has been deleted failed.")
        f.accounts = [a for a in f.accounts if a.access_key != access_key]
        f.write()
        return f

    def set_global_white(self, patterns: list[str], path: str = "") -> AclFile:
        for p in patterns:
            parse_address_pattern(p)
        f = self.file_for(path)
        f.global_white = list(patterns)
        f.write()
        return f
