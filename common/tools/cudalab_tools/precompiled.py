"""The emu's CUDA declarations (cudalab/emu/front_end.h and what it includes) precompiled, so that
the front end parses them once rather than with each file: they are nearly all that Clang reads
for a lab's file (an empty file takes 0.63 s to parse with them as text, 0.03 s with them
precompiled, on the development VM).

A precompiled header is made for each set of language options (the `-std`, and those of the
file's definitions whose names the header's files mention: the others cannot change what it
declares, and Clang takes a precompiled header made without them) and kept in the user's cache
(`$XDG_CACHE_HOME/cudalab`, else `~/.cache/cudalab`) beside a manifest of the files it read, with
their sizes and modification times, and the names they mention. Clang does not check the files
when libclang loads the header, so the manifest does: a file changed since (an emu header edited,
a system header upgraded) makes it again. It is written under a temporary name and renamed into
place, so that builds side by side may each make it. Where the cache cannot be written, the header
is included as text: the same declarations, parsed again.

Limitation: libclang 18 crashes (and recovers) on some headers that a file includes after a
precompiled CUDA header (libstdc++'s <memory> and <thread>, through bits/shared_ptr_base.h), also
when the header holds them already; cuda_ast parses such a file again with the header as text.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

FOR_SERIALIZATION = 0x10  # CXTranslationUnit_ForSerialization (the bindings do not name it)


def cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cudalab"


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Clang's own report of a crash it recovered from (on stderr) not shown: the caller parses
    again with the header as text."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def header(ci: ModuleType, language: list[str], defines: Sequence[str], name: str) -> Path | None:
    """The header `name` (found on the include folders of `language`) precompiled for the options
    `language` and the `defines` (N or N=V) its files mention, current; None where it cannot be
    made or kept."""
    plain = made(ci, tuple(language), name)
    if plain is None:
        return None
    try:
        mentioned = names(plain.with_suffix(".json"))
    except (OSError, ValueError, KeyError):  # (removed or damaged since: the text then)
        return None
    relevant = tuple(f"-D{d}" for d in defines if d.partition("=")[0] in mentioned)
    return made(ci, (*language, *relevant), name) if relevant else plain


@functools.cache
def made(ci: ModuleType, language: tuple[str, ...], name: str) -> Path | None:
    """The header `name` precompiled for exactly `language`, made now if it was missing or is out
    of date."""
    version = ci.conf.lib.clang_getCString(ci.conf.lib.clang_getClangVersion())
    key = json.dumps([str(version), list(language), name])
    stem = "front-end-" + hashlib.sha256(key.encode()).hexdigest()[:16]
    try:
        folder = cache_folder()
        pch, manifest = folder / f"{stem}.pch", folder / f"{stem}.json"
        if pch.is_file() and current(manifest):
            return pch
        folder.mkdir(parents=True, exist_ok=True)
        return make(ci, list(language), name, pch, manifest)
    except (OSError, RuntimeError):  # (RuntimeError: no home folder)
        return None


def current(manifest: Path) -> bool:
    """Whether every file the manifest lists still has the size and time it had."""
    try:
        files = json.loads(manifest.read_text())["files"]
        return all(stamp(Path(name)) == [size, time] for name, size, time in files)
    except (OSError, ValueError, TypeError, KeyError):
        return False


@functools.cache
def names(manifest: Path) -> frozenset[str]:
    """The identifiers that the files of a precompiled header mention (its manifest says)."""
    return frozenset(json.loads(manifest.read_text())["names"])


def stamp(file: Path) -> list[int]:
    status = file.stat()
    return [status.st_size, status.st_mtime_ns]


def make(ci: ModuleType, language: list[str], header: str, pch: Path, manifest: Path) -> Path | None:
    """Parses `header` alone and saves it as `pch`, with the manifest of the files it read."""
    source = str(pch.with_suffix(".cu"))  # (never written: its text is given to Clang)
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD | ci.TranslationUnit.PARSE_INCOMPLETE
    tu = ci.Index.create().parse(
        source,
        args=language,
        unsaved_files=[(source, f'#include "{header}"\n')],
        options=options | FOR_SERIALIZATION,
    )
    if any(d.severity >= ci.Diagnostic.Error for d in tu.diagnostics):
        return None  # (the parse of each file reports them, with the header as text)
    files = sorted({str(Path(i.include.name).resolve()) for i in tu.get_includes()})
    mentioned: set[str] = set()
    for file in files:
        mentioned.update(re.findall(r"[A-Za-z_]\w*", Path(file).read_text(errors="replace")))
    read = {"files": [[file, *stamp(Path(file))] for file in files], "names": sorted(mentioned)}
    writers = ((pch, tu.save), (manifest, lambda f: Path(f).write_text(json.dumps(read))))
    for final, write in writers:
        handle, temporary = tempfile.mkstemp(dir=pch.parent, prefix=final.name + ".")
        os.close(handle)
        try:
            write(temporary)
            os.replace(temporary, final)
        except (OSError, ci.TranslationUnitSaveError):
            Path(temporary).unlink(missing_ok=True)
            return None
    return pch
