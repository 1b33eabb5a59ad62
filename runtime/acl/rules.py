"""The ACL 1.0 rules engine (J497 ``PlainPermissionManager`` / ``PlainAccessValidator`` /
``RemoteAddressStrategyFactory``), pure: accounts and whitelists in, allow or an ``AclError`` out. No IO.

The reusable API is ``AclRules.check(remote_ip, cmd)`` for remoting requests and, for other front ends (gRPC),
``AclRules.validate(remote_ip, access_key, signature_ok, code, resources)`` (the same check order with the front
end's own signature check and resource list) or ``AclRules.account(access_key)`` + ``Account.authorize``.

Permission bits (J ``Permission``)::

    DENY=1  ANY=2 (internal: PUB or SUB)  PUB=4  SUB=8        "PUB|SUB" = 12; unknown text parses as DENY

Check order (docs/reference/acl.md §4): global whitelist → AccessKey present → account known → account whitelist (skips
signature and perms) → signature → PUB on RMQ_SYS_TRACE_TOPIC allowed → admin-only codes → resource perms, groups
checked as their ``%RETRY%`` topic.

Request code → resources and the admin-only codes: the rule table in ``runtime.acl.code_rules`` (every code the
broker serves has a row; a code without one is admin-only). A name server passes its own ``admin_codes``.

Remote-address patterns (``parse_address_pattern``): blank → matches nothing; ``*``, ``*.*.*.*``,
``*:*:*:*:*:*:*:*`` → everything; ``a.b.c.{1,2}`` or ``x,y`` → those addresses; ``*`` or ``a-b`` in an octet → the
first such octet (index 1-3) is a range, the octets before it literal, the octets after it not compared; anything
else → that one address (IPv6 compared expanded).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from protocol.acl.signature import ACCESS_KEY, Mac, keyed_mac, verify_signature
from protocol.codes import RequestCode
from protocol.command import RemotingCommand
from runtime.acl.auth2 import Entry, decide
from runtime.acl.code_rules import (
    ADMIN_CODES,
    ANY,
    DENY,
    PUB,
    RETRY_PREFIX,
    SUB,
    RecordTopic,
    RuleError,
    required_resources,
)

__all__ = ["ADMIN_CODES", "ANY", "DENY", "PUB", "RETRY_PREFIX", "SUB", "required_resources"]

TRACE_TOPIC: Final = "RMQ_SYS_TRACE_TOPIC"
KEY_MIN_LENGTH: Final = 6  # J: length <= 6 is rejected

_PERMS: Final = {"DENY": DENY, "PUB": PUB, "SUB": SUB, "PUB|SUB": PUB | SUB, "SUB|PUB": PUB | SUB}
_EXC: Final = "org.apache.rocketmq.acl.common.AclException"
_FRAME: Final = "org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:541)"


class AclError(Exception):
    """A request refused (or a rule that cannot load); ``remark`` is what J's clients see. ``acl2`` marks the
    refusal of an ACL 2.0 user, which RocketMQ 5.3+ answers differently: NO_PERMISSION (16) with the bare message
    (``remark2``), and on gRPC UNAUTHORIZED for authentication, FORBIDDEN (``forbidden``) for authorization."""

    def __init__(self, message: str, *, acl2: bool = False, forbidden: bool = False) -> None:
        super().__init__(message)
        self.acl2 = acl2
        self.forbidden = forbidden

    @property
    def remark(self) -> str:
        return f"{_EXC}: {self}, {_FRAME}"


def parse_perm(text: str | None) -> int:
    """J ``Permission.parsePermFromString``: unknown or missing → DENY."""
    if text is None:
        return DENY
    return _PERMS.get(text.strip().upper(), DENY)


def perm_text(perm: int) -> str:
    return {DENY: "DENY", PUB: "PUB", SUB: "SUB", PUB | SUB: "PUB|SUB"}.get(perm, "DENY")


def is_valid_perm_text(text: str) -> bool:
    return text.strip().upper() in ("PUB", "SUB", "PUB|SUB", "SUB|PUB", "DENY")


def check_permission(needed: int, owned: int) -> bool:
    """J ``Permission.checkPermission``."""
    if owned & DENY:
        return False
    if needed & ANY:
        return bool(owned & (PUB | SUB))
    return bool(needed & owned)


def retry_topic(group: str | None) -> str | None:
    return None if group is None else RETRY_PREFIX + group


# -- remote-address patterns ------------------------------------------------------------------------------------------


def host_of(peer: str) -> str:
    """``ip:port`` / ``[v6]:port`` → the ip (J cuts everything after the last ``:``)."""
    host = peer.rpartition(":")[0] if ":" in peer else peer
    return host[1:-1] if host[:1] == "[" and host[-1:] == "]" else host


def _ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _norm(addr: str) -> str:
    """An address in the form patterns compare: IPv4 as is, IPv6 expanded and upper-cased."""
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:
        return addr
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return ip.exploded.upper()
    return str(ip)


@dataclass(frozen=True, slots=True)
class AddressPattern:
    """One compiled pattern; ``matches(ip)`` takes a bare ip string."""

    text: str
    kind: str  # blank | all | set | range
    members: frozenset[str] = frozenset()
    head: tuple[str, ...] = ()
    lo: int = 0
    hi: int = 0
    v6: bool = False

    def matches(self, ip: str) -> bool:
        kind = self.kind
        if kind == "all":
            return True
        if kind == "blank":
            return False
        addr = _norm(ip)
        if kind == "set":
            return addr in self.members
        parts = addr.split(":" if self.v6 else ".")
        n = len(self.head)
        if len(parts) <= n or tuple(p.upper() if self.v6 else p for p in parts[:n]) != self.head:
            return False
        try:
            value = int(parts[n], 16 if self.v6 else 10)
        except ValueError:
            return False
        return self.lo <= value <= self.hi


def _member(text: str) -> str:
    t = text.strip()
    try:
        ipaddress.ip_address(t)
    except ValueError:
        raise AclError(f"Netaddress examine scope Exception netaddress is {text}") from None
    return _norm(t)


def _parse_range(text: str) -> AddressPattern:
    v6 = ":" in text
    parts = [p.strip() for p in text.split(":" if v6 else ".")]
    width, top, base = (8, 0xFFFF, 16) if v6 else (4, 255, 10)
    if len(parts) != width:
        raise AclError(f"Netaddress examine Exception netaddress is {text}")
    for i in range(1, width):
        p = parts[i]
        if p == "*":
            lo, hi = 0, top
        elif "-" in p:
            a, _, b = p.partition("-")
            try:
                lo, hi = int(a, base), int(b, base)
            except ValueError:
                raise AclError(f"Netaddress examine scope Exception netaddress is {text}") from None
            if not (0 <= lo <= hi <= top):
                raise AclError(f"Netaddress examine scope Exception netaddress is {text}")
        else:
            continue
        head = tuple(parts[:i])
        for h in head:
            try:
                if not 0 <= int(h, base) <= top:
                    raise ValueError(h)
            except ValueError:
                raise AclError(f"Netaddress examine Exception netaddress is {text}") from None
        if v6:
            head = tuple(h.upper().zfill(4) for h in head)
        return AddressPattern(text, "range", head=head, lo=lo, hi=hi, v6=v6)
    raise AclError(f"Netaddress examine Exception netaddress is {text}")


def parse_address_pattern(text: str | None) -> AddressPattern:
    """Compile one pattern (J ``RemoteAddressStrategyFactory.getRemoteAddressStrategy``); AclError if invalid."""
    t = (text or "").strip()
    if not t:
        return AddressPattern("", "blank")
    if t in ("*", "*.*.*.*", "*:*:*:*:*:*:*:*"):
        return AddressPattern(t, "all")
    if t.endswith("}"):
        head, sep, rest = t.partition("{")
        if not sep or not head or head[-1] not in ".:":
            raise AclError(f"Netaddress examine Exception netaddress is {t}")
        return AddressPattern(t, "set", frozenset(_member(head + m) for m in rest[:-1].split(",")))
    if "," in t:
        return AddressPattern(t, "set", frozenset(_member(m) for m in t.split(",")))
    if "*" in t or "-" in t:
        return _parse_range(t)
    return AddressPattern(t, "set", frozenset({_member(t)}))


def _ip_matches(pattern: str, ip: str) -> bool:
    """An ACL 2.0 ``sourceIps`` entry against the caller (an unreadable pattern matches nothing)."""
    try:
        return parse_address_pattern(pattern).matches(ip)
    except AclError:
        return False


# -- accounts and the check -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Account:
    access_key: str
    secret_key: str
    white_remote_address: str = ""
    admin: bool = False
    default_topic_perm: str = "DENY"
    default_group_perm: str = "DENY"
    topic_perms: tuple[str, ...] = ()
    group_perms: tuple[str, ...] = ()
    # derived
    white: AddressPattern = field(default=AddressPattern("", "blank"), compare=False)
    perms: dict[str, int] | None = field(default=None, compare=False)  # None: no entries at all
    topic_default: int = field(default=DENY, compare=False)
    group_default: int = field(default=DENY, compare=False)
    mac: Mac | None = field(default=None, compare=False, repr=False)  # keyed with secret_key
    # (code, topic, group) of requests this account was allowed: the check is a pure function of the account
    # (rebuilt on reload) and those fields, so it is done once per kind of request (``_PERM_FIELDS`` codes)
    allowed: set[tuple[int, str | None, str | None]] = field(default_factory=set, compare=False, repr=False)
    # ACL 2.0 users (``runtime.acl.auth2``): their policy entries (None: an ACL 1.0 account); ``ip_bound`` when an
    # entry names source addresses (then no decision is remembered: it depends on the caller's address)
    policy: tuple[Entry, ...] | None = field(default=None, compare=False, repr=False)
    ip_bound: bool = field(default=False, compare=False, repr=False)
    disabled: bool = field(default=False, compare=False, repr=False)  # an ACL 2.0 user with userStatus disable

    @classmethod
    def user(
        cls, username: str, password: str, *, super_user: bool, policy: tuple[Entry, ...], disabled: bool = False
    ) -> Account:
        """An ACL 2.0 user: signs like an ACL 1.0 account (AccessKey = username, secret = password), authorised by
        ``policy``; a ``Super`` user is admin and skips every check."""
        return cls(
            username,
            password,
            admin=super_user,
            mac=keyed_mac(password),
            policy=policy,
            ip_bound=any(e.source_ips for e in policy),
            disabled=disabled,
        )

    @classmethod
    def build(
        cls,
        access_key: str,
        secret_key: str,
        *,
        white_remote_address: str | None = "",
        admin: bool = False,
        default_topic_perm: str | None = None,
        default_group_perm: str | None = None,
        topic_perms: Iterable[str] = (),
        group_perms: Iterable[str] = (),
    ) -> Account:
        """Validate and compile one account (J ``buildPlainAccessResource``); AclError when invalid."""
        if not access_key or len(access_key) <= KEY_MIN_LENGTH:
            raise AclError(f"The accessKey={access_key} cannot be null and length should longer than 6")
        if not secret_key or len(secret_key) <= KEY_MIN_LENGTH:
            raise AclError(f"The secretKey={secret_key} value length should longer than 6")
        tps = tuple(str(p) for p in topic_perms)
        gps = tuple(str(p) for p in group_perms)
        perms: dict[str, int] = {}
        for entry, group in [(e, False) for e in tps] + [(e, True) for e in gps]:
            parts = entry.split("=")
            if len(parts) != 2:
                raise AclError(f"Parse resource permission failed for {'group' if group else 'topic'}:{entry}")
            name = parts[0].strip()
            perms[RETRY_PREFIX + name if group else name] = parse_perm(parts[1])
        return cls(
            access_key,
            secret_key,
            white_remote_address or "",
            bool(admin),
            (default_topic_perm or "DENY").strip(),
            (default_group_perm or "DENY").strip(),
            tps,
            gps,
            white=parse_address_pattern(white_remote_address),
            perms=perms or None,
            topic_default=parse_perm(default_topic_perm),
            group_default=parse_perm(default_group_perm),
            mac=keyed_mac(secret_key),
        )

    def authorize(
        self, code: int, resources: dict[str, int] | None, admin_codes: frozenset[int] = ADMIN_CODES, ip: str = ""
    ) -> None:
        """J ``checkPerm`` (plus the trace-topic rule before it): raise AclError when this account may not run
        ``code`` on ``resources`` (resource → needed perm; groups as ``%RETRY%<group>``; None: admin-only) from
        ``ip``. An ACL 2.0 user is decided by its policy (``auth2.decide``)."""
        if resources is not None and len(resources) == 1 and resources.get(TRACE_TOPIC) == PUB:
            return
        if (resources is None or code in admin_codes) and not self.admin:
            if self.policy is not None:
                raise AclError(
                    f"User:{self.access_key} has no permission for request code={code} from {ip}: Need admin permission"
                    " (a Super user).",
                    acl2=True,
                    forbidden=True,
                )
            raise AclError(f"Need admin permission for request code={code}, but accessKey={self.access_key} is not")
        if not resources:
            return
        if self.policy is not None:
            if self.admin:
                return
            for resource, needed in resources.items():
                reason = decide(self.policy, resource, needed, ip, _ip_matches)
                if reason is not None:  # J 5.3 AclAuthorizationHandler's words
                    target, _, detail = reason.partition(", ")
                    raise AclError(
                        f"User:{self.access_key} has no permission to access {target} from {ip}, {detail}.",
                        acl2=True,
                        forbidden=True,
                    )
            return
        owned = self.perms
        if owned is None and self.admin:
            return
        for resource, needed in resources.items():
            group = resource.startswith(RETRY_PREFIX)
            have = owned.get(resource) if owned is not None else None
            if have is None:
                have = self.group_default if group else self.topic_default
            if not check_permission(needed, have):
                what = f"group:{resource[len(RETRY_PREFIX) :]}" if group else f"topic:{resource}"
                raise AclError(f"No default permission for {what}")


def _resources(cmd: RemotingCommand, record_topic: RecordTopic | None) -> dict[str, int] | None:
    try:
        return required_resources(cmd, record_topic)
    except RuleError as exc:
        raise AclError(str(exc)) from None


# The hot codes whose resources depend on two ext fields only (the table above): code → (topic field, group field)
_PERM_FIELDS: Final[dict[int, tuple[str, str]]] = {
    RequestCode.SEND_MESSAGE: ("topic", "group"),
    RequestCode.SEND_MESSAGE_V2: ("b", "a"),
    RequestCode.PULL_MESSAGE: ("topic", "consumerGroup"),
    RequestCode.UPDATE_CONSUMER_OFFSET: ("topic", "consumerGroup"),
}
_ALLOWED_MAX: Final = 4096


@dataclass(frozen=True, slots=True)
class AclRules:
    """Every account and the global whitelist, as loaded from all ACL files."""

    accounts: dict[str, Account] = field(default_factory=dict)
    global_white: tuple[AddressPattern, ...] = ()
    admin_codes: frozenset[int] = ADMIN_CODES

    def account(self, access_key: str) -> Account | None:
        return self.accounts.get(access_key)

    def check(self, remote_ip: str, cmd: RemotingCommand, record_topic: RecordTopic | None = None) -> None:
        """J ``validate`` for one remoting request; raises AclError with J's message when refused.
        ``record_topic`` resolves the topic of a stored record (codes whose resource is a record)."""
        # ``validate`` inlined: this runs for every request
        for pattern in self.global_white:
            if pattern.matches(remote_ip):
                return
        ext = cmd.ext_fields
        ak = ext.get(ACCESS_KEY)
        if ak is None:
            raise AclError("No accessKey is configured")
        acct = self.accounts.get(ak)
        if acct is None:
            raise AclError(f"No acl config for {ak}")
        if acct.white.kind != "blank" and acct.white.matches(remote_ip):
            return
        if not verify_signature(ext, cmd.body, acct.mac or acct.secret_key):
            if acct.policy is not None:
                raise AclError("check signature failed.", acl2=True)
            raise AclError(f"Check signature failed for accessKey={ak}")
        if acct.disabled:
            raise AclError(f"User:{ak} is disabled.", acl2=True)
        code = cmd.code
        names = _PERM_FIELDS.get(code)
        if names is None or acct.ip_bound:
            acct.authorize(code, _resources(cmd, record_topic), self.admin_codes, remote_ip)
            return
        key = (code, ext.get(names[0]), ext.get(names[1]))
        allowed = acct.allowed
        if key in allowed:
            return
        acct.authorize(code, _resources(cmd, record_topic), self.admin_codes, remote_ip)  # AclError: not remembered
        if len(allowed) >= _ALLOWED_MAX:
            allowed.clear()
        allowed.add(key)

    def validate(
        self,
        remote_ip: str,
        access_key: str | None,
        signature_ok: Callable[[str], bool],
        code: int,
        resources: Callable[[], dict[str, int] | None],
    ) -> None:
        """The check order for any front end (remoting here; gRPC with its own signature and resource mapping):
        ``signature_ok(secret_key)`` verifies the request's signature, ``resources()`` lists what it needs."""
        for pattern in self.global_white:
            if pattern.matches(remote_ip):
                return
        if access_key is None:
            raise AclError("No accessKey is configured")
        acct = self.accounts.get(access_key)
        if acct is None:
            raise AclError(f"No acl config for {access_key}")
        if acct.white.kind != "blank" and acct.white.matches(remote_ip):
            return
        if not signature_ok(acct.secret_key):
            if acct.policy is not None:
                raise AclError("check signature failed.", acl2=True)
            raise AclError(f"Check signature failed for accessKey={access_key}")
        if acct.disabled:
            raise AclError(f"User:{access_key} is disabled.", acl2=True)
        acct.authorize(code, resources(), self.admin_codes, remote_ip)
