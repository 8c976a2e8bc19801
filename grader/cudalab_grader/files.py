"""Touching what a submission made, without letting it stop the grader.

A job's folders hold whatever the student's code left: links to /dev/zero, FIFOs, trees thousands
of levels deep, folders whose permissions it took away. Each function here does one thing with
such a folder and never blocks, never recurses in Python, never reads without a bound.
"""

from __future__ import annotations

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


def walk_files(top: Path, max_depth: int, skip: tuple[str, ...] = ()) -> Iterator[Path]:
    """The regular files under `top` (links and special files left out), folders named in `skip`
    not entered; raises TooDeep for a folder more than `max_depth` levels below `top`."""
    pending = [(top, 0)]
    while pending:
        folder, depth = pending.pop()
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name in skip:
                        continue
                    if depth + 1 > max_depth:
                        raise TooDeep(f"folders nested more than {max_depth} levels deep")
                    pending.append((Path(entry.path), depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    yield Path(entry.path)
