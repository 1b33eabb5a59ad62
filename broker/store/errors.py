"""Errors raised by the message store."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of store failures."""


class StoreClosedError(StoreError):
    """An operation on a store that has been closed."""


class StoreLockedError(StoreError):
    """Another process holds the store directory's lock file."""
