"""Finding submissions and unpacking them safely.

A submission is one entry of the submissions folder: a folder, a .zip or a .tar.gz (.tgz) holding
a copy of the workbook, or of its labs/ folder, or of single lab folders. Archives are hostile
until shown otherwise: absolute paths, `..`, links and special files are refused, and so are
archives that would unpack to too many files or bytes (zip bombs) or folders too deep. Whatever
goes wrong in unpacking one submission is that submission's rejection, with the reason.

The student's name is the entry's name as the course's LMS wrote it: Unicode kept (normalised to
NFC), only what a file name cannot hold replaced. Two entries that end up with the same name are
both graded, the second under "name (2)", and listed (Submission.renamed_from).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import stat
import tarfile
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .files import TooDeep, walk_files

MAX_FILES = 2000
MAX_BYTES = 50 * 1024 * 1024  # unpacked size of one submission
MAX_DEPTH = 32  # folder levels in one submission
MAX_NAME_BYTES = 200  # a student's name as a file name (the file system allows 255)
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")


class SubmissionError(Exception):
    """A submission that cannot be graded; the message names it and says why."""


@dataclass(frozen=True)
class Submission:
    student: str  # the entry's name without its archive suffix (see student_name)
    path: Path  # the folder or archive as given
    submitted_at: float  # modification time of the entry (seconds since the epoch)
    renamed_from: str | None = None  # set when another entry had the same name first


def folder_name(student: str) -> str:
    """The name of a folder of the student's (unpacked files, job, cache): from their name, but
    without any character a shell or a file system could misread."""
    return hashlib.sha256(student.encode()).hexdigest()[:16]


def printable(text: str) -> str:
    """`text` with the bytes of a name that is not UTF-8 (surrogate escapes) shown as U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def student_name(entry: Path) -> str:
    name = printable(entry.name)
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    name = unicodedata.normalize("NFC", name)
    # A file name of its own (feedback/<student>.html): no separators, controls or leading dot.
    name = "".join(c if c.isprintable() and c not in "/\\\ufffd" else "_" for c in name).strip()
    if name.startswith("."):
        name = "_" + name[1:]
    while len(name.encode()) > MAX_NAME_BYTES:
        name = name[:-1]
    return name or "_"


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
        student, renamed_from = student_name(entry), None
        if student in found:
            renamed_from = student
            student = next(
                f"{renamed_from} ({n})" for n in range(2, 1 << 30) if f"{renamed_from} ({n})" not in found
            )
        found[student] = Submission(student, entry, entry.stat().st_mtime, renamed_from)
    return sorted(found.values(), key=lambda s: s.student)


def _check_member(name: str, archive: Path) -> PurePosixPath:
    path = PurePosixPath(name)
    shown = printable(name)
    if path.is_absolute() or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise SubmissionError(f"{archive.name}: refused: absolute path {shown!r} in the archive")
    if ".." in path.parts:
        raise SubmissionError(f"{archive.name}: refused: path {shown!r} leaves the archive (..)")
    if len(path.parts) > MAX_DEPTH:
        raise SubmissionError(f"{archive.name}: refused: folders nested more than {MAX_DEPTH} levels deep")
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
                raise SubmissionError(
                    f"{archive.name}: refused: {printable(m.name)!r} is a link (to {printable(m.linkname)!r})"
                )
            if not (m.isfile() or m.isdir()):
                raise SubmissionError(
                    f"{archive.name}: refused: {printable(m.name)!r} is not a file or folder"
                )
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
    for src in walk_files(folder, MAX_DEPTH, skip=("build", ".git")):  # links are left out
        count += 1
        total += src.stat().st_size
        if count > MAX_FILES or total > MAX_BYTES:
            raise SubmissionError(
                f"{folder.name}: refused: more than {MAX_FILES} files or {MAX_BYTES >> 20} MiB"
            )
        target = dest.joinpath(*map(_safe_part, src.relative_to(folder).parts))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)


def _why_unreadable(error: Exception) -> str:
    text = str(error)
    if isinstance(error, RuntimeError) and "encrypted" in text:
        return "the .zip is password-protected: hand it in without a password"
    if isinstance(error, NotImplementedError) and "compression" in text:
        return (
            "the .zip uses a compression method that cannot be read here (Deflate64, which Windows "
            "uses for large folders?): make it with zip, 7-Zip (Deflate) or as a .tar.gz"
        )
    if isinstance(error, EOFError | tarfile.ReadError | zipfile.BadZipFile):
        return f"damaged or cut short ({text or type(error).__name__})"
    if isinstance(error, TooDeep):
        return f"refused: {text}"
    return f"{type(error).__name__}: {text}"


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
    except SubmissionError as e:
        raise SubmissionError(printable(str(e))) from None
    except Exception as e:  # whatever one archive does, it is that submission's rejection
        raise SubmissionError(
            f"{printable(p.name)}: cannot unpack: {printable(_why_unreadable(e))}"
        ) from None


def find_lab_file(unpacked: Path, lab: str, filename: str) -> Path | None:
    """The student's copy of labs/<lab>/<filename>, wherever the submission's root is: the
    workbook, its labs/ folder, the lab folder, or one folder above any of those."""
    candidates = [p for p in walk_files(unpacked, MAX_DEPTH) if p.name == filename]
    for p in sorted(candidates, key=lambda p: len(p.parts)):
        parts = p.relative_to(unpacked).parts
        if len(parts) >= 2 and parts[-2] == lab:
            return p
    return None


# A student's own sources beside a lab's files: a second .cu, a header of their own.
OWN_SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".inl")


def lab_files(unpacked: Path, lab: str, required: list[str], instructors: set[str]) -> dict[str, Path | None]:
    """The student's files of `lab`, by name: each of the `required` ones (None where missing),
    and the student's own sources in the folder that holds them, but for a name the instructor's
    lab folder has (`instructors`: the interface header, the harness, the rubric) and the names the
    build takes for a harness or a demo (test_*, demo_*)."""
    found = {name: find_lab_file(unpacked, lab, name) for name in required}
    for folder in sorted({p.parent for p in found.values() if p is not None}):
        for p in sorted(folder.iterdir()):
            if (
                p.suffix in OWN_SOURCE_SUFFIXES
                and p.name not in instructors
                and not p.name.startswith(("test_", "demo_"))
                and p.is_file()
                and not p.is_symlink()
            ):
                found.setdefault(p.name, p)
    return found


def content_hash(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]
