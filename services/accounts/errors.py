"""Every refusal of the accounts package, under one root (each mapped to a problem answer in
services.problems)."""

from __future__ import annotations


class AccountError(Exception):
    """Root of the accounts package's refusals; `code` is the problem's machine-readable code."""

    code = "account_error"


class BadName(AccountError, ValueError):
    """A user or bot name the service refuses (bad characters, a look-alike of Latin letters)."""

    code = "bad_name"


class WeakPassword(AccountError, ValueError):
    """A password too short, too long or too guessable."""

    code = "weak_password"


class NameTaken(AccountError):
    """The name (as normalised) belongs to a player already."""

    code = "name_taken"


class LoginFailed(AccountError):
    """Wrong name or password (one answer for both: the answer tells no one which names exist)."""

    code = "login_failed"


class LoginThrottled(AccountError):
    """Too many log-in attempts for this name or address; `retry` seconds until the next."""

    code = "login_rate_limited"

    def __init__(self, retry: int) -> None:
        super().__init__(f"too many log-in attempts: retry in {retry} s")
        self.retry = retry


class NotYours(AccountError):
    """A bot or token the caller does not own, or an operation its token may not do."""

    code = "not_yours"


class TokenNotFound(AccountError, LookupError):
    """No token of the caller's with that id."""

    code = "token_not_found"


class BadScopes(AccountError, ValueError):
    """Scopes a token of this kind of player cannot have."""

    code = "bad_scopes"


class BadVersion(AccountError, ValueError):
    """A bot version label the service refuses (empty, too long, or not printable)."""

    code = "bad_version"
