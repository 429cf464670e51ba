"""The install's one build step: compile the rules core's hot modules with mypyc.

Optional by design: without a C compiler (or with KING_NATIVE=0) the project installs as pure
Python, and a module that fails to compile leaves its source to run. The stamp written here
records the sources compiled; `tournament/native.py` loads the compiled modules only while the
sources still match it (docs/ARCHITECTURE.md, "The native build").
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from setuptools import setup

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from tournament.native import NATIVE_MODULES, NATIVE_STAMP, sources_digest  # noqa: E402


def native_extensions() -> list[Any]:
    if os.environ.get("KING_NATIVE", "1") == "0":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        return []
    folder = HERE / "domain"
    (folder / NATIVE_STAMP).write_text(
        json.dumps({"sources": sources_digest(folder), "modules": list(NATIVE_MODULES)}) + "\n",
        encoding="utf-8",
    )
    try:
        extensions = mypycify(
            [f"domain/{name}.py" for name in NATIVE_MODULES],
            opt_level="3",
            group_name="domain_native",
        )
    except (Exception, SystemExit) as exc:  # mypyc refused the code: install it as Python
        print(f"king: the native build is skipped ({exc!r}); pure Python", file=sys.stderr)
        return []
    for extension in extensions:
        extension.optional = True  # a failed compile leaves the source, not a failed install
    return extensions


setup(ext_modules=native_extensions())
