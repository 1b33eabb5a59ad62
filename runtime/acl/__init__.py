"""Access control, checked by the servers before a request is dispatched: ACL 1.0 accounts (``rules``, the
``plain_acl.yml`` files in ``files``), ACL 2.0 users and policies (``auth2``), the per-request-code rule table
(``code_rules``) and the request hook with its file watcher (``hook``). The request signature itself is wire
vocabulary and lives in ``protocol.acl.signature``."""
