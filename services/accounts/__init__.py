"""Accounts: people sign themselves up, log in, make scoped tokens and own bots."""

from services.accounts.errors import (
    AccountError,
    BadName,
    BadScopes,
    BadVersion,
    LoginFailed,
    LoginThrottled,
    NameTaken,
    NotYours,
    TokenNotFound,
    WeakPassword,
)
from services.accounts.service import AccountService, TokenInfo

__all__ = [
    "AccountError",
    "AccountService",
    "BadName",
    "BadScopes",
    "BadVersion",
    "LoginFailed",
    "LoginThrottled",
    "NameTaken",
    "NotYours",
    "TokenInfo",
    "TokenNotFound",
    "WeakPassword",
]
