"""Passwords: argon2id hashes (argon2-cffi, its default parameters) and what a password must be.

Hashing takes tens of milliseconds and a lot of memory on purpose: call these off the event
loop. An unknown name is checked against a dummy hash, so that a wrong name costs as long as a
wrong password and the time of an answer tells no one which names exist."""

from __future__ import annotations

from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from services.accounts.errors import WeakPassword

MIN_LENGTH = 10
MAX_LENGTH = 128  # characters; longer input is refused before hashing (argon2 reads it all)
MIN_DISTINCT = 5
# The most common passwords of the public breach lists that are at least MIN_LENGTH long.
COMMON = frozenset(
    {
        "1234567890",
        "12345678910",
        "0123456789",
        "1q2w3e4r5t",
        "qwertyuiop",
        "password123",
        "password1234",
        "iloveyou123",
        "1qaz2wsx3edc",
        "qwerty12345",
        "qwerty123456",
        "abcdefghij",
        "passw0rd123",
        "football123",
        "monkey12345",
        "letmein1234",
        "administrator",
    }
)

_hasher = PasswordHasher()  # argon2id


@cache
def _dummy() -> str:
    """A hash an unknown name is checked against, so it costs what a wrong password costs
    (made at the first log-in, not at import: a hash is tens of milliseconds of CPU)."""
    return _hasher.hash("not a password of anyone's: compared against for unknown names")


def check_strength(password: str, name: str) -> None:
    """Raises WeakPassword with the reason (the password itself is never quoted)."""
    if len(password) > MAX_LENGTH:
        raise WeakPassword(f"a password has at most {MAX_LENGTH} characters")
    if len(password) < MIN_LENGTH:
        raise WeakPassword(f"a password has at least {MIN_LENGTH} characters")
    if len(set(password)) < MIN_DISTINCT:
        raise WeakPassword(f"a password has at least {MIN_DISTINCT} different characters")
    folded = password.casefold()
    if name and name in folded:
        raise WeakPassword("a password does not contain the user name")
    if folded in COMMON:
        raise WeakPassword("that password is one of the most common ones")


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(stored: str | None, password: str) -> bool:
    """True if `password` is the one `stored` was made from; None (no such account) checks
    against a dummy hash and is always False."""
    if len(password) > MAX_LENGTH:
        return False
    try:
        return _hasher.verify(stored or _dummy(), password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False
