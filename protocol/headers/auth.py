"""The ACL 2.0 admin headers (RocketMQ 5.3+ auth codes 3001–3010), declared with the generic codec
(``protocol.headers.codec``); ``!`` = required. Bodies are ``UserInfo`` / ``AclInfo`` JSON (``runtime.acl.auth2``).

| class                    | code(s)                                 | fields                            |
|--------------------------|-----------------------------------------|-----------------------------------|
| UserRequestHeader        | 3001 create, 3002 update, 3003 delete,  | !username                         |
|                          | 3004 get user                           |                                   |
| ListUsersRequestHeader   | 3005 list users                         | filter                            |
| AclRequestHeader         | 3006 create, 3007 update, 3009 get acl  | !subject                          |
| DeleteAclRequestHeader   | 3008 delete acl                         | !subject policyType resource      |
| ListAclsRequestHeader    | 3010 list acls                          | subjectFilter resourceFilter      |
"""

from __future__ import annotations

from protocol.headers.codec import WireHeader, header, wire


@header
class UserRequestHeader(WireHeader):
    username: str = wire("username")


@header
class ListUsersRequestHeader(WireHeader):
    filter: str | None = wire("filter", default=None, empty=None)


@header
class AclRequestHeader(WireHeader):
    subject: str = wire("subject")


@header
class DeleteAclRequestHeader(WireHeader):
    subject: str = wire("subject")
    policy_type: str | None = wire("policyType", default=None, empty=None)
    resource: str | None = wire("resource", default=None, empty=None)


@header
class ListAclsRequestHeader(WireHeader):
    subject_filter: str | None = wire("subjectFilter", default=None, empty=None)
    resource_filter: str | None = wire("resourceFilter", default=None, empty=None)
