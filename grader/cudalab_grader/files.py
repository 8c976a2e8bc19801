"""Touching what a submission made, without letting it stop the grader.

A job's folders hold whatever the student's code left: links to /dev/zero, FIFOs, trees thousands
of levels deep, folders whose permissions it took away. Each function here does one thing with
such a folder and never blocks, never recurses in Python, never reads without a bound.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path


class TooDeep(Exception):
    """A folder tree deeper than allowed; the message names the folder."""


def remove_tree(path: Path) -> None:
    """Deletes `path` and everything under it, however deep or locked; never raises.

    chmod and rm walk trees without recursion (fts), where shutil.rmtree recurses once per level.
    """
    if not os.path.lexists(path):
        return
    if path.is_dir() and not path.is_symlink():
        # A job may have removed its own write permission from its folders: give it back first.
        subprocess.run(["chmod", "-R", "u+rwX", "--", str(path)], capture_output=True, check=False)
    subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], capture_output=True, check=False)


def read_regular_file(path: Path, limit: int) -> bytes | None:
    """The bytes of `path` if it is a regular file of at most `limit` bytes, else None.

    Opened without following a link and without blocking (a FIFO opens at once and is refused);
    read with a bound, whatever its size said when it was opened.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        data = f.read(limit + 1)
    return data if len(data) <= limit else None


def write_atomically(path: Path, text: str) -> None:
    """Writes `text` to `path` so that a reader sees the old file or the new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def walk(top: Path, max_depth: int | None = None, skip: tuple[str, ...] = ()) -> Iterator[os.DirEntry]:
    """Every entry under `top`, links included but never followed, each folder's by name; folders
    named in `skip` are not entered and a folder that cannot be read is passed over. Raises TooDeep
    for a folder more than `max_depth` levels below `top`."""
    pending = [(str(top), 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            yield entry
            if entry.is_dir(follow_symlinks=False) and entry.name not in skip:
                if max_depth is not None and depth + 1 > max_depth:
                    raise TooDeep(f"folders nested more than {max_depth} levels deep")
                pending.append((entry.path, depth + 1))


def walk_files(top: Path, max_depth: int, skip: tuple[str, ...] = ()) -> Iterator[Path]:
    """The regular files under `top` (links and special files left out)."""
    return (Path(e.path) for e in walk(top, max_depth, skip) if e.is_file(follow_symlinks=False))


def disk_bytes(folders: set[Path]) -> int:
    """The blocks that everything under `folders` holds."""
    total = 0
    for folder in folders:
        for entry in walk(folder):
            with contextlib.suppress(OSError):  # gone since it was listed
                total += entry.stat(follow_symlinks=False).st_blocks * 512
    return total
