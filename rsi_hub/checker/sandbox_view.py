"""What of the host the `code_tests` sandbox shows: the Python runtime, read-only, and nothing else.

Both sandbox backends build the same view from `runtime_view()`: read-only binds of the system
libraries (`/usr/lib*`, the loader cache) and of the interpreter's prefix (`sys.base_prefix`,
e.g. `/root/.pyenv/versions/3.11.7`), the top-level `/lib`-style links of a merged-/usr system,
and empty read-only directories over every site-packages directory inside them, so the child has
the standard library but no installed package (this one included: it holds the suites' expected
answers).
"""

from __future__ import annotations

import functools
import glob
import os
import site
import sys
import sysconfig
from dataclasses import dataclass

_LIB_DIRS = ("/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32")
_TOP_LINKS = ("/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin")
_FILES = ("/etc/ld.so.cache",)


@dataclass(frozen=True, slots=True)
class RuntimeView:
    """The interpreter to run, paths to bind read-only, paths to hide and links to create."""

    python: str
    ro: list[str]
    hide: list[str]
    symlinks: list[tuple[str, str]]


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


@functools.cache
def runtime_view() -> RuntimeView:
    """The view for this interpreter (computed once)."""
    prefix = os.path.realpath(sys.base_prefix)
    python = os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)
    ro = [prefix] if not _inside(prefix, list(_LIB_DIRS)) else []
    ro += [d for d in _LIB_DIRS if os.path.isdir(d) and not os.path.islink(d)]
    if not _inside(python, ro):
        ro.append(os.path.dirname(python))
    ro += [f for f in _FILES if os.path.isfile(f)]
    ro = sorted(set(ro))
    symlinks = [(p, os.readlink(p)) for p in _TOP_LINKS if os.path.islink(p)]
    # Real (non-link) top-level library dirs of a system without merged /usr.
    ro += [p for p in _TOP_LINKS[1:] if os.path.isdir(p) and not os.path.islink(p)]
    candidates = set(site.getsitepackages([prefix]))
    base = {"base": prefix, "platbase": prefix, "installed_base": prefix}
    candidates.update(sysconfig.get_paths(vars=base)[k] for k in ("purelib", "platlib"))
    for pattern in ("/usr/lib/python3*/*-packages", "/usr/lib/python3/dist-packages"):
        candidates.update(glob.glob(pattern))
    hide = sorted(
        os.path.realpath(p)
        for p in candidates
        if os.path.isdir(p) and _inside(os.path.realpath(p), ro)
    )
    return RuntimeView(python, ro, sorted(set(hide)), symlinks)
