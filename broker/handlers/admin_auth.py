"""The ACL 2.0 admin requests (RocketMQ 5.3+ ``AdminBrokerProcessor`` auth codes; ``mqadmin createUser`` …
``listAcl``), registered when ``aclEnable=true``: users and their ACL policies in ``<rocketmqHome>/conf/auth.json``
(``runtime.acl.auth2``), checked by the same engine as the ACL 1.0 accounts. Admin-only (rule table).

==== ============ ==================================================================================================
code request      behaviour (J's replies: NO_PERMISSION 16 for a user/ACL that is or is not there, INVALID_PARAMETER
                  29 for a blank name or a body that does not read)
==== ============ ==================================================================================================
3001 create user  header ``username``, body UserInfo; "The user is existed" when it is
3002 update user  fields present in the body replace the stored ones; "The user is not exist"
3003 delete user  the user and its ACL; success when absent
3004 get user     body UserInfo **without the password** (J returns it), empty when absent
3005 list users   header ``filter`` (substring of the name); body [UserInfo] without passwords
3006 create acl   header ``subject`` (``User:<name>``, the user must exist), body AclInfo; merged into an existing ACL
3007 update acl   as create, for an existing ACL only ("The acl is not exist")
3008 delete acl   header ``subject`` [``policyType``] [``resource``]: that resource's entries, else the whole ACL
3009 get acl      body AclInfo, empty when absent
3010 list acls    header ``subjectFilter`` / ``resourceFilter`` (substrings); body [AclInfo]
==== ============ ==================================================================================================

Each change is written atomically and the rules reloaded before the reply: it applies to the next request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from broker.handlers._common import decode_header
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers.auth import (
    AclRequestHeader,
    DeleteAclRequestHeader,
    ListAclsRequestHeader,
    ListUsersRequestHeader,
    UserRequestHeader,
)
from protocol.remoting.handler import Handler, HandlerError, RequestContext
from runtime.acl.auth2 import (
    AuthError,
    compile_acl,
    load_doc,
    public_user,
    save_doc,
    subject_name,
    user_info,
)
from runtime.acl.hook import AclWatcher

Doc = dict[str, list[dict[str, Any]]]


def _body(cmd: RemotingCommand) -> dict[str, Any]:
    try:
        raw = json.loads(cmd.body or b"{}")
    except ValueError as exc:
        raise HandlerError(ResponseCode.INVALID_PARAMETER, f"the body does not read: {exc}") from None
    if not isinstance(raw, dict):
        raise HandlerError(ResponseCode.INVALID_PARAMETER, "the body is not a JSON object")
    return raw


def _merge_policies(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """J ``Acl.updatePolicy``: per policy type, an entry for the same resource is replaced, others are added."""
    policies = {str(p.get("policyType") or "Custom"): list(p.get("entries") or []) for p in old.get("policies") or []}
    for p in new.get("policies") or []:
        kind = str(p.get("policyType") or "Custom")
        entries = policies.setdefault(kind, [])
        for e in p.get("entries") or []:
            entries[:] = [x for x in entries if x.get("resource") != e.get("resource")] + [e]
    return {
        "subject": old.get("subject") or new.get("subject"),
        "policies": [{"policyType": k, "entries": v} for k, v in policies.items()],
    }


class AuthAdminHandlers:
    def __init__(self, watcher: AclWatcher) -> None:
        self._watcher = watcher

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.AUTH_CREATE_USER: self._op(self._create_user),
            RequestCode.AUTH_UPDATE_USER: self._op(self._update_user),
            RequestCode.AUTH_DELETE_USER: self._op(self._delete_user),
            RequestCode.AUTH_GET_USER: self._read(self._get_user),
            RequestCode.AUTH_LIST_USER: self._read(self._list_users),
            RequestCode.AUTH_CREATE_ACL: self._op(self._create_acl),
            RequestCode.AUTH_UPDATE_ACL: self._op(self._update_acl),
            RequestCode.AUTH_DELETE_ACL: self._op(self._delete_acl),
            RequestCode.AUTH_GET_ACL: self._read(self._get_acl),
            RequestCode.AUTH_LIST_ACL: self._read(self._list_acls),
        }

    def _doc(self) -> Doc:
        try:
            return load_doc(self._watcher.home)
        except AuthError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, str(exc)) from None

    def _op(self, change: Callable[[Doc, RemotingCommand], None]) -> Handler:
        """A change: applied to the file's document, written, and the rules reloaded before the reply."""

        async def handle(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
            doc = self._doc()
            try:
                change(doc, cmd)
            except AuthError as exc:
                raise HandlerError(ResponseCode.INVALID_PARAMETER, str(exc)) from None
            save_doc(self._watcher.home, doc)
            if not self._watcher.reload():
                raise HandlerError(ResponseCode.SYSTEM_ERROR, "saved, but the ACL files do not load (see the log)")
            return cmd.make_response()

        return handle

    def _read(self, view: Callable[[Doc, RemotingCommand], Any]) -> Handler:
        async def handle(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
            out = view(self._doc(), cmd)
            return cmd.make_response(body=json.dumps(out).encode() if out else b"")

        return handle

    # -- users ----------------------------------------------------------------------------------------------------

    @staticmethod
    def _username(cmd: RemotingCommand) -> str:
        name = decode_header(UserRequestHeader, cmd).username.strip()
        if not name:
            raise HandlerError(ResponseCode.INVALID_PARAMETER, "The username is blank")
        return name

    def _create_user(self, doc: Doc, cmd: RemotingCommand) -> None:
        name = self._username(cmd)
        if any(u.get("username") == name for u in doc["users"]):
            raise HandlerError(ResponseCode.NO_PERMISSION, "The user is existed")
        doc["users"].append(user_info(_body(cmd), name))

    def _update_user(self, doc: Doc, cmd: RemotingCommand) -> None:
        name = self._username(cmd)
        old = next((u for u in doc["users"] if u.get("username") == name), None)
        if old is None:
            raise HandlerError(ResponseCode.NO_PERMISSION, "The user is not exist")
        given = {k: v for k, v in _body(cmd).items() if v not in (None, "")}
        old.update(user_info({**old, **given}, name))

    def _delete_user(self, doc: Doc, cmd: RemotingCommand) -> None:
        name = self._username(cmd)
        doc["users"] = [u for u in doc["users"] if u.get("username") != name]
        doc["acls"] = [a for a in doc["acls"] if _subject_user(a) != name]

    def _get_user(self, doc: Doc, cmd: RemotingCommand) -> Any:
        name = self._username(cmd)
        return next((public_user(u) for u in doc["users"] if u.get("username") == name), None)

    def _list_users(self, doc: Doc, cmd: RemotingCommand) -> Any:
        needle = decode_header(ListUsersRequestHeader, cmd).filter or ""
        return [public_user(u) for u in doc["users"] if needle in str(u.get("username", ""))]

    # -- acls -----------------------------------------------------------------------------------------------------

    @staticmethod
    def _subject(doc: Doc, cmd: RemotingCommand) -> str:
        subject = decode_header(AclRequestHeader, cmd).subject
        name = subject_name(subject)
        if not any(u.get("username") == name for u in doc["users"]):
            raise HandlerError(ResponseCode.NO_PERMISSION, f"The subject of {subject} is not exist")
        return f"User:{name}"

    def _put_acl(self, doc: Doc, cmd: RemotingCommand, *, must_exist: bool) -> None:
        subject = self._subject(doc, cmd)
        acl = _body(cmd)
        if not acl.get("policies"):
            raise HandlerError(ResponseCode.NO_PERMISSION, "The body of acl is null")
        acl["subject"] = subject
        compile_acl(acl)  # AuthError: an entry that does not read
        old = next((a for a in doc["acls"] if a.get("subject") == subject), None)
        if old is None and must_exist:
            raise HandlerError(ResponseCode.NO_PERMISSION, "The acl is not exist")
        merged = _merge_policies(old or {"subject": subject}, acl)
        doc["acls"] = [a for a in doc["acls"] if a.get("subject") != subject] + [merged]

    def _create_acl(self, doc: Doc, cmd: RemotingCommand) -> None:
        self._put_acl(doc, cmd, must_exist=False)

    def _update_acl(self, doc: Doc, cmd: RemotingCommand) -> None:
        self._put_acl(doc, cmd, must_exist=True)

    def _delete_acl(self, doc: Doc, cmd: RemotingCommand) -> None:
        h = decode_header(DeleteAclRequestHeader, cmd)
        subject = f"User:{subject_name(h.subject)}"
        if not h.resource:
            doc["acls"] = [a for a in doc["acls"] if a.get("subject") != subject]
            return
        for a in doc["acls"]:
            if a.get("subject") != subject:
                continue
            for p in a.get("policies") or []:
                if h.policy_type and str(p.get("policyType", "Custom")).lower() != h.policy_type.lower():
                    continue
                p["entries"] = [e for e in p.get("entries") or [] if e.get("resource") != h.resource]

    def _get_acl(self, doc: Doc, cmd: RemotingCommand) -> Any:
        subject = f"User:{subject_name(decode_header(AclRequestHeader, cmd).subject)}"
        return next((a for a in doc["acls"] if a.get("subject") == subject), None)

    def _list_acls(self, doc: Doc, cmd: RemotingCommand) -> Any:
        h = decode_header(ListAclsRequestHeader, cmd)
        out = []
        for a in doc["acls"]:
            if h.subject_filter and h.subject_filter not in str(a.get("subject", "")):
                continue
            if h.resource_filter and not any(
                h.resource_filter in str(e.get("resource", ""))
                for p in a.get("policies") or []
                for e in p.get("entries") or []
            ):
                continue
            out.append(a)
        return out


def _subject_user(acl: dict[str, Any]) -> str:
    try:
        return subject_name(str(acl.get("subject", "")))
    except AuthError:
        return ""
