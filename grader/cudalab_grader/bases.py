"""Base builds kept between runs: the instructor's workbook, built once per version.

A base (`src/` and `build/`, as Grader lays out a job's folder) is keyed by everything its build
reads: the workbook's build parts, the backend and the tools that build it (`key`). Its manifest
names the labs it holds and the tests that skip in it. A later run, or another grader process on
the same file system (the grader's tests, a Slurm shard), takes a base of its key whose labs
include its own instead of building one; while one process builds a base (`building`), another
that needs only labs of that base waits for it (`wait_for_builder`) rather than build the same.

Only bases built inside bubblewrap are kept: there every job sees its copy at the same paths, so a
base is valid wherever it lies. The grader copies a finished base into the cache itself (as its
own user, so no job's user may write to it), under a temporary name that becomes the base's in one
rename. A process using a base holds a shared lock on its manifest for as long as it grades; a
base of another key, or one whose labs a newer base includes, is removed only when no process
holds that lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from . import workbook
from .files import remove_tree
from .workbook import ROOT

CACHE = ROOT / "build" / "grader-bases"
MANIFEST = "manifest.json"
TOOLS = ("cmake", "c++", "cc", "nvcc", "python3")


@dataclass
class Base:
    folder: Path  # holds src/ and build/
    labs: list[str]
    skipped: dict[str, set[str]]  # per lab, the tests that skip on this backend
    lock: IO[str] | None = None  # the shared lock on the manifest, while this process uses it

    def release(self) -> None:
        if self.lock is not None:
            self.lock.close()
            self.lock = None


def key(backend: str) -> str:
    """Changes when anything the base build reads changes: a file of the workbook's build parts,
    the backend, or a tool that builds it (found on PATH: its path, size and time)."""
    h = hashlib.sha256(f"backend={backend}\n".encode())
    # (what Grader copies of the build parts: not __pycache__ nor build folders)
    workbook.digest_files(h, (ROOT / part for part in workbook.BUILD_PARTS), skip=("__pycache__", "build"))
    for tool in TOOLS:
        found = shutil.which(tool)
        if found:
            st = os.stat(found)
            h.update(f"{os.path.realpath(found)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def _manifest(folder: Path) -> dict | None:
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _lock(folder: Path, how: int) -> IO[str] | None:
    """`folder`'s manifest, open and locked (`how`: fcntl.LOCK_SH to use the base, LOCK_EX to
    remove it) without waiting; None where it is gone, or locked the other way by another process."""
    try:
        f = open(folder / MANIFEST)  # noqa: SIM115 (a user's lock is held for the whole run)
    except OSError:
        return None
    try:
        fcntl.flock(f, how | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return None
    if not folder.is_dir():  # removed after it was opened
        f.close()
        return None
    return f


def find(base_key: str, labs: list[str]) -> Base | None:
    """A kept base of `base_key` holding every lab of `labs`, locked for this process's use."""
    if not CACHE.is_dir():
        return None
    for folder in sorted(CACHE.glob(f"{base_key}-*")):
        data = _manifest(folder)
        if data is None or not set(labs) <= set(data.get("labs", [])):
            continue
        lock = _lock(folder, fcntl.LOCK_SH)
        if lock is None:
            continue
        skipped = {lab: set(tests) for lab, tests in data["skipped"].items()}
        return Base(folder, list(data["labs"]), skipped, lock)
    return None


def _labs_key(labs: list[str]) -> str:
    return hashlib.sha256(" ".join(sorted(labs)).encode()).hexdigest()[:8]


@contextlib.contextmanager
def building(base_key: str, labs: list[str]) -> Iterator[None]:
    """Tells other grader processes, for as long as the context lasts, that this one builds a
    base of `base_key` holding `labs` (a file naming them, locked)."""
    sign = CACHE / f"{base_key}-{_labs_key(labs)}.building"
    try:
        CACHE.mkdir(parents=True, exist_ok=True)
        f = open(sign, "a+")  # noqa: SIM115
    except OSError:  # no cache here: nobody to tell
        yield
        return
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.truncate(0)
        f.write(json.dumps(sorted(labs)))
        f.flush()
        try:
            yield
        finally:
            sign.unlink(missing_ok=True)


def wait_for_builder(base_key: str, labs: list[str]) -> None:
    """Returns once no other process builds a base of `base_key` that holds every lab of `labs`."""
    if not CACHE.is_dir():
        return
    for sign in CACHE.glob(f"{base_key}-*.building"):
        try:
            f = open(sign)  # noqa: SIM115
        except OSError:
            continue  # finished
        with f:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
                continue  # nobody holds it: a builder that died
            except OSError:
                pass
            try:
                theirs = json.loads(f.read() or "[]")
            except ValueError:
                theirs = []
            if set(labs) <= set(theirs):
                fcntl.flock(f, fcntl.LOCK_SH)  # until that builder is done


def keep(base_key: str, built: Base) -> str:
    """Copies the base in `built.folder` into the cache (as this process's user, without the
    job's leftovers) and removes the kept bases it makes unneeded; what was done, for the log."""
    final = CACHE / f"{base_key}-{_labs_key(built.labs)}"
    partial = CACHE / f".{final.name}.{os.getpid()}.partial"
    try:
        CACHE.mkdir(parents=True, exist_ok=True)
        remove_tree(partial)
        for part in ("src", "build"):
            shutil.copytree(built.folder / part, partial / part, symlinks=True)
        manifest = {"labs": sorted(built.labs), "skipped": {k: sorted(v) for k, v in built.skipped.items()}}
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=1))
        _not_writable_by_others(partial)
        os.rename(partial, final)
    except OSError as e:
        remove_tree(partial)
        if final.is_dir():  # another grader kept the same base first
            return f"base build kept by another grader in {final}"
        return f"base build not kept ({e.strerror or e}): the next run builds it again"
    _remove_unneeded(base_key, set(built.labs), final)
    return f"base build kept in {final} for later runs"


def _not_writable_by_others(folder: Path) -> None:
    """No one but this process's user may change a kept base."""
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, os.lstat(path).st_mode & ~0o022)


def _remove_unneeded(base_key: str, labs: set[str], kept: Path) -> None:
    """Removes the kept bases of other keys and those of this key whose labs `labs` includes,
    each only while no process uses it."""
    for folder in CACHE.iterdir():
        if folder.name.startswith("."):  # another process's copy or removal, or one that died
            pid = folder.name.rsplit(".", 2)[-2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                remove_tree(folder)
            continue
        if folder == kept or not folder.is_dir():
            continue  # (a .building file is its builder's to remove)
        data = _manifest(folder)
        same_key = folder.name.startswith(f"{base_key}-")
        if same_key and data is not None and not set(data.get("labs", [])) <= labs:
            continue
        lock = _lock(folder, fcntl.LOCK_EX)
        if lock is None:
            continue  # in use
        with lock:
            doomed = CACHE / f".{folder.name}.{os.getpid()}.removed"
            try:
                os.rename(folder, doomed)
            except OSError:
                continue
        remove_tree(doomed)
