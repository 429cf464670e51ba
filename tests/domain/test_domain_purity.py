"""domain/ is a pure core (issue 2, docs/rules-engine.md): standard library only, no I/O, no clock,
no randomness of its own. Read from the source, so a new import or a stray print fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DOMAIN = Path(__file__).resolve().parents[2] / "domain"
MODULES = sorted(DOMAIN.rglob("*.py"))

# Pure computation only. Not here on purpose: os, io, sys, time, datetime, random, secrets,
# socket, pathlib, logging, threading, subprocess, ... (I/O, clock, randomness, global state).
ALLOWED = {
    "__future__",
    "bisect",
    "collections",
    "collections.abc",
    "dataclasses",
    "enum",
    "fractions",
    "functools",
    "hashlib",  # king-shuffle/1: the seed is an input
    "hmac",
    "itertools",
    "math",
    "operator",
    "re",
    "struct",  # bytes to integers, as king-shuffle/1 reads its draws
    "typing",
}
FORBIDDEN_CALLS = {"open", "print", "input", "breakpoint", "exec", "eval", "compile", "__import__"}


def impurities(source: str) -> list[str]:
    """What in a module's source breaks the rule: imports off the list, I/O builtins called."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:  # relative: inside domain/
            names = [node.module or ""]
        found += [
            f"line {node.lineno} imports {name}"
            for name in names
            if name != "domain" and not name.startswith("domain.") and name not in ALLOWED
        ]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in FORBIDDEN_CALLS
        ):
            found.append(f"line {node.lineno} calls {node.func.id}")
    return found


def test_the_domain_has_modules() -> None:
    assert {p.name for p in MODULES} >= {"cards.py", "deal.py", "game.py", "record.py"}


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_the_domain_imports_pure_standard_modules_and_calls_no_io(path: Path) -> None:
    assert impurities(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("source", "finds"),
    [
        ("import os", "line 1 imports os"),
        ("from pathlib import Path", "line 1 imports pathlib"),
        ("import random as r", "line 1 imports random"),
        ("import re, time", "line 1 imports time"),
        ("from logging import getLogger", "line 1 imports logging"),
        ("def f():\n    print('x')", "line 2 calls print"),
        ("with open('f') as fh: pass", "line 1 calls open"),
        ("x = input()", "line 1 calls input"),
    ],
)
def test_the_check_finds_what_it_is_for(source: str, finds: str) -> None:
    assert finds in impurities(source)


def test_the_check_lets_pure_code_through() -> None:
    assert impurities("from dataclasses import dataclass\nfrom domain.cards import bit\n") == []
