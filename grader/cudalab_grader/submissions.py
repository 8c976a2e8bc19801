"""Finding submissions and unpacking them safely.

A submission is one entry of the submissions folder: a folder, a .zip or a .tar.gz (.tgz) holding
a copy of the workbook, or of its labs/ folder, or of single lab folders. Archives are hostile
until shown otherwise: absolute paths, `..`, links and special files are refused, and so are
archives that would unpack to too many files or bytes (zip bombs).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_FILES = 2000
MAX_BYTES = 50 * 1024 * 1024  # unpacked size of one submission
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")


class SubmissionError(Exception):
    """A submission that cannot be graded; the message names it and says why."""


@dataclass(frozen=True)
class Submission:
    student: str  # the entry's name without its archive suffix
    path: Path  # the folder or archive as given
    submitted_at: float  # modification time of the entry (seconds since the epoch)


def student_name(entry: Path) -> str:
    name = entry.name
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    # Names become file names and CSV cells: keep them printable and safe.
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"


def find(folder: Path) -> list[Submission]:
    """One submission per folder or archive in `folder`, sorted by student."""
    if not folder.is_dir():
        raise SubmissionError(f"{folder}: not a folder of submissions")
    found: dict[str, Submission] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if not (entry.is_dir() or entry.name.endswith(ARCHIVE_SUFFIXES)):
            continue
        student = student_name(entry)
        if student in found:
            raise SubmissionError(f"{entry}: a second submission of student '{student}'")
        found[student] = Submission(student, entry, entry.stat().st_mtime)
    return list(found.values())


def _check_member(name: str, archive: Path) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise SubmissionError(f"{archive.name}: refused: absolute path {name!r} in the archive")
    if ".." in path.parts:
        raise SubmissionError(f"{archive.name}: refused: path {name!r} leaves the archive (..)")
    return path


def _safe_part(part: str) -> str:
    # Names that are not valid UTF-8 arrive with surrogate escapes: keep them, but printable.
    return part.encode("utf-8", "surrogateescape").decode("utf-8", "replace").replace("\ufffd", "_")


def _unpack_zip(archive: Path, dest: Path) -> None:
    with zipfile.ZipFile(archive) as z:
        members = z.infolist()
        if len(members) > MAX_FILES:
            raise SubmissionError(f"{archive.name}: refused: {len(members)} files (limit {MAX_FILES})")
        total = 0
        for m in members:
            path = _check_member(m.filename, archive)
            mode = m.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise SubmissionError(f"{archive.name}: refused: {m.filename!r} is a link")
            total += m.file_size
            if total > MAX_BYTES:
                raise SubmissionError(f"{archive.name}: refused: unpacks to more than {MAX_BYTES >> 20} MiB")
            target = dest.joinpath(*map(_safe_part, path.parts))
            if m.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            written = 0
            with z.open(m) as src, open(target, "wb") as out:
                # The declared size may lie: count what really comes out.
                while chunk := src.read(1 << 16):
                    written += len(chunk)
                    if total - m.file_size + written > MAX_BYTES:
                        raise SubmissionError(
                            f"{archive.name}: refused: unpacks to more than {MAX_BYTES >> 20} MiB"
                        )
                    out.write(chunk)


def _unpack_tar(archive: Path, dest: Path) -> None:
    try:
        tar = tarfile.open(archive, "r:gz")
    except (tarfile.TarError, OSError) as e:
        raise SubmissionError(f"{archive.name}: not a readable .tar.gz: {e}") from None
    with tar:
        total, count = 0, 0
        for m in tar:
            count += 1
            if count > MAX_FILES:
                raise SubmissionError(f"{archive.name}: refused: more than {MAX_FILES} files")
            path = _check_member(m.name, archive)
            if m.issym() or m.islnk():
                raise SubmissionError(f"{archive.name}: refused: {m.name!r} is a link (to {m.linkname!r})")
            if not (m.isfile() or m.isdir()):
                raise SubmissionError(f"{archive.name}: refused: {m.name!r} is not a file or folder")
            target = dest.joinpath(*map(_safe_part, path.parts))
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            total += m.size
            if total > MAX_BYTES:
                raise SubmissionError(f"{archive.name}: refused: unpacks to more than {MAX_BYTES >> 20} MiB")
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(m)
            if src is None:
                continue
            with src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)


def _copy_folder(folder: Path, dest: Path) -> None:
    count, total = 0, 0
    for root, dirs, files in os.walk(folder, followlinks=False):
        rel = Path(root).relative_to(folder)
        dirs[:] = [d for d in dirs if not (Path(root) / d).is_symlink() and d not in ("build", ".git")]
        for f in files:
            src = Path(root) / f
            if src.is_symlink() or not src.is_file():
                continue  # links could point anywhere: only plain files are taken
            count += 1
            total += src.stat().st_size
            if count > MAX_FILES or total > MAX_BYTES:
                raise SubmissionError(
                    f"{folder.name}: refused: more than {MAX_FILES} files or {MAX_BYTES >> 20} MiB"
                )
            target = dest / rel / f
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)


def unpack(submission: Submission, dest: Path) -> None:
    """Puts the submission's files into the empty folder `dest`, or raises SubmissionError."""
    dest.mkdir(parents=True, exist_ok=True)
    p = submission.path
    try:
        if p.is_dir():
            _copy_folder(p, dest)
        elif p.name.endswith(".zip"):
            _unpack_zip(p, dest)
        else:
            _unpack_tar(p, dest)
    except zipfile.BadZipFile as e:
        raise SubmissionError(f"{p.name}: not a readable .zip: {e}") from None
    except OSError as e:
        raise SubmissionError(f"{p.name}: cannot unpack: {e}") from None


def find_lab_file(unpacked: Path, lab: str, filename: str) -> Path | None:
    """The student's copy of labs/<lab>/<filename>, wherever the submission's root is: the
    workbook, its labs/ folder, the lab folder, or one folder above any of those."""
    candidates = [p for p in unpacked.rglob(filename) if p.is_file() and not p.is_symlink()]
    for p in sorted(candidates, key=lambda p: len(p.parts)):
        parts = p.relative_to(unpacked).parts
        if len(parts) >= 2 and parts[-2] == lab:
            return p
    return None


def content_hash(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]
