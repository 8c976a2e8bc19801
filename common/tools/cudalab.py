#!/usr/bin/env python3
"""cudalab: build and run any CUDA program, on the CPU (the emu backend) or on a GPU.

    cudalab run prog.cu [more.cu ...] [nvcc flags] [-- program arguments]
    cudalab cc -o prog prog.cu [more.cu ...] [nvcc flags]

`run` builds with every check on (as `make check` does), runs the program and passes its output
through; the exit status is the program's, or 1 when a check stopped a kernel and the program
did not notice (a failed device assert is the program's own check: its status stays the
program's). `cc` only builds. On the CPU backend each .cu file (and the local headers it
includes) is translated by common/emu/translate.py and compiled with the instrumentation that the
checks use; assert() stays on; includes are found as nvcc finds them (a source's folder serves its
quoted includes; a .c file is C in the host compiler's dialect).

Options of cudalab itself:
    --unchecked        build without the checks (much faster, nothing is explained)
    --backend cuda     build with nvcc and run on the GPU (default: emu)
    --timeout S        stop a launch that runs longer than S seconds (default: no limit)
    --report           run: count the kernels' memory traffic per line and write a page of it
                       beside the program (PROGRAM.html: its sources with the traffic per line)
    --verbose          print the commands

nvcc's usual flags are understood (-I -D -U -o -O* -g -L -l -Xcompiler -c -x cu) or accepted and
ignored with a note (-G -lineinfo -arch -gencode -code -rdc, --use_fast_math, -lcublas ...). On the
emu the code compiles as C++20; -std (C++17 when absent, as nvcc's default) chooses the standard
library's names a program sees (a C++17 program has no std::lerp).
Ctrl-C during a long launch stops the kernel and says where each running thread was.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

# The tools package: beside this file in the workbook; in share/cudalab where cmake installed it.
sys.path.append(str(Path(__file__).resolve().parent.parent / "share" / "cudalab"))
from cudalab_tools import records  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def emu_build() -> Path:
    """The build whose emu runtime `cudalab` compiles against: make check's (build/default, on a
    machine without a GPU) or make check BACKEND=emu's (build/emu); build/emu where neither is."""
    for build in (ROOT / "build" / "default", ROOT / "build" / "emu"):
        cache = build / "CMakeCache.txt"
        if cache.is_file() and "CUDALAB_BACKEND:INTERNAL=emu" in cache.read_text(errors="replace"):
            return build
    return ROOT / "build" / "emu"


CUDA_SUFFIXES = (".cu", ".cuh")
HOST_SUFFIXES = (".cpp", ".cc", ".cxx", ".c")
# nvcc flags that change nothing on the CPU: (flag, takes a value).
IGNORED = {
    "-G": False,
    "--device-debug": False,
    "-lineinfo": False,
    "--generate-line-info": False,
    "-arch": True,
    "--gpu-architecture": True,
    "-gencode": True,
    "--generate-code": True,
    "-code": True,
    "--gpu-code": True,
    "-rdc": True,
    "--relocatable-device-code": True,
    "-dc": False,
    "-dlink": False,
    "--use_fast_math": False,
    "-use_fast_math": False,
    "-ccbin": True,
    "--compiler-bindir": True,
    "-m64": False,
    "--expt-relaxed-constexpr": False,
    "--expt-extended-lambda": False,
    "--extended-lambda": False,
    "-Wno-deprecated-gpu-targets": False,
    "-maxrregcount": True,
    "--ptxas-options": True,
    "-Xptxas": True,
    "-res-usage": False,
    "--resource-usage": False,
    "-t": True,
    "--threads": True,
    "-cudart": True,
    "--cudart": True,
    "-std": True,
    "--std": True,
    "-Xlinker": True,
}
GPU_LIBRARIES = {
    "cublas",
    "cublasLt",
    "curand",
    "cufft",
    "cusparse",
    "cusolver",
    "cudart",
    "cuda",
    "nvrtc",
    "cudadevrt",
    "cudart_static",
    "nvToolsExt",
    "nvJitLink",
}
# The value of __cplusplus for each -std a program may ask for (gnu++NN as c++NN); nvcc 13 compiles
# C++17 when none is given.
CPLUSPLUS = {
    "c++03": 199711,
    "c++11": 201103,
    "c++14": 201402,
    "c++17": 201703,
    "c++20": 202002,
    "c++23": 202302,
}


class UsageError(Exception):
    pass


@dataclass
class Build:
    sources: list[Path] = field(default_factory=list)
    output: Path | None = None
    includes: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    compiler_flags: list[str] = field(default_factory=list)
    link_flags: list[str] = field(default_factory=list)
    optimize: str = "-O2"
    standard: int = CPLUSPLUS["c++17"]  # the program's dialect (-std), as __cplusplus says it
    compile_only: bool = False
    all_cuda: bool = False  # -x cu: every source is CUDA
    notes: list[str] = field(default_factory=list)
    nvcc_flags: list[str] = field(default_factory=list)  # as given, for --backend cuda


def value_of(flag: str, args: list[str], i: int) -> tuple[str, int]:
    """The value of a flag written `-Xv`, `-X=v`, `--x=v` or `-X v`; the index after it."""
    arg = args[i]
    if arg.startswith(flag + "="):
        return arg[len(flag) + 1 :], i + 1
    if len(arg) > len(flag):
        return arg[len(flag) :], i + 1
    if i + 1 >= len(args):
        raise UsageError(f"{flag} needs a value")
    return args[i + 1], i + 2


def parse(args: list[str]) -> Build:
    b = Build()
    i = 0
    while i < len(args):
        arg = args[i]
        name = arg.split("=", 1)[0]
        b.nvcc_flags.append(arg)
        if not arg.startswith("-"):
            b.sources.append(Path(arg))
            i += 1
            continue
        if name in IGNORED:
            takes = IGNORED[name] and "=" not in arg
            if name in ("-std", "--std"):
                standard = arg.split("=", 1)[1] if "=" in arg else args[i + 1] if takes else ""
                b.standard = CPLUSPLUS.get(standard.replace("gnu++", "c++"), b.standard)
                if b.standard < CPLUSPLUS["c++20"]:
                    b.notes.append(
                        f"{arg}{'' if '=' in arg else ' ' + standard}: the emu backend compiles "
                        "the code as C++20, with the standard library's names of the program's "
                        "standard (no std::lerp)"
                    )
            else:
                b.notes.append(
                    f"{arg}{' ' + args[i + 1] if takes and i + 1 < len(args) else ''}: "
                    "ignored (it concerns GPU code)"
                )
            if takes:
                b.nvcc_flags.append(args[i + 1])
            i += 2 if takes else 1
            continue
        if arg.startswith("-I"):
            v, i = value_of("-I", args, i)
            b.includes.append(v)
        elif arg.startswith("-D"):
            v, i = value_of("-D", args, i)
            b.defines.append("-D" + v)
        elif arg.startswith("-U"):
            v, i = value_of("-U", args, i)
            b.defines.append("-U" + v)
        elif arg == "-o" or arg == "--output-file":
            v, i = value_of(arg, args, i)
            b.output = Path(v)
        elif arg.startswith("-O"):
            b.optimize = arg
            i += 1
        elif arg == "-g" or arg == "--debug":
            i += 1  # always on: the diagnostics need the lines
        elif arg == "-c" or arg == "--compile":
            b.compile_only = True
            i += 1
        elif arg == "-x":
            v, i = value_of("-x", args, i)
            b.all_cuda = v == "cu"
        elif arg.startswith("-L"):
            v, i = value_of("-L", args, i)
            b.link_flags.append("-L" + v)
        elif arg.startswith("-l"):
            v, i = value_of("-l", args, i)
            if v in GPU_LIBRARIES:
                b.notes.append(f"-l{v}: ignored (the emu backend is the CUDA runtime)")
            else:
                b.link_flags.append("-l" + v)
        elif name in ("-Xcompiler", "--compiler-options"):
            v, i = value_of(name, args, i)
            b.compiler_flags += [f for f in v.split(",") if f]
        elif arg in ("-w", "-pg", "-fopenmp") or arg.startswith(("-W", "-f", "-m")):
            b.compiler_flags.append(arg)
            i += 1
        else:
            raise UsageError(f"unknown option {arg} (see cudalab --help)")
    if not b.sources:
        raise UsageError("no source files given")
    for s in b.sources:
        if not s.is_file():
            raise UsageError(f"{s}: no such file")
        if not b.all_cuda and s.suffix.lower() not in (*CUDA_SUFFIXES, *HOST_SUFFIXES, ".o"):
            raise UsageError(f"{s}: not a CUDA or C++ source file (nor an object file)")
    return b


def toolchain(verbose: bool) -> dict:
    """Builds (or brings up to date) the emu runtime; returns what compiling against it needs.
    CUDALAB_TOOLCHAIN may name the toolchain file of a build that already has it (the tests do)."""
    if given := os.environ.get("CUDALAB_TOOLCHAIN"):
        return json.loads(Path(given).read_text())
    installed = Path(__file__).resolve().parent.parent / "share" / "cudalab" / "cudalab-toolchain.json"
    if installed.exists():  # cmake --install put cudalab in PREFIX/bin
        return json.loads(installed.read_text())
    build = emu_build()
    if not (build / "cudalab-toolchain.json").exists():  # never configured, or a configure that failed
        run_quiet(["cmake", "-S", str(ROOT), "-B", str(build), "-DBACKEND=emu"], verbose)
    run_quiet(
        [
            "cmake",
            "--build",
            str(build),
            "--target",
            "cudalab_emu",
            "cudalab_common",
            "-j",
            str(os.cpu_count() or 2),
        ],
        verbose,
    )
    return json.loads((build / "cudalab-toolchain.json").read_text())


def run_quiet(command: list[str], verbose: bool) -> None:
    if verbose:
        print("+", shlex.join(command), file=sys.stderr)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"cudalab: building the emu runtime failed: {shlex.join(command)}")


def compile_emu(b: Build, checked: bool, output: Path, verbose: bool) -> int:
    tc = toolchain(verbose)
    work = output.resolve().parent / (output.name + ".emu")
    work.mkdir(parents=True, exist_ok=True)
    objects: list[str] = []
    includes = [f"-I{d}" for d in b.includes] + [f"-I{d}" for d in tc["include"]]
    # (the emu's CUB: the compiler's system folder, before the system's own; the front end's too)
    library_includes = tc.get("system_include", [])
    includes += [f"-isystem{d}" for d in library_includes]
    for s in b.sources:
        suffix = s.suffix.lower()
        if suffix == ".o":
            objects.append(str(s))
            continue
        cuda = suffix in CUDA_SUFFIXES or b.all_cuda
        source = s.resolve()
        if cuda:
            translated = work / (s.name + ".cpp")
            # (-I and -D: its front end, Clang, reads the file with the program's own flags)
            # (__FILE__: the path as written, as nvcc gives it)
            command = [tc["python"], tc["translate"], str(source), str(translated), f"--file-name={s}"]
            command += [f"-I{d}" for d in [*b.includes, *library_includes]]
            command += [d for d in b.defines if d.startswith("-D")]
            command.append(f"-DCUDALAB_PROGRAM_CPLUSPLUS={b.standard}L")
            if verbose:
                print("+", shlex.join(command), file=sys.stderr)
            if subprocess.run(command).returncode != 0:
                return 1
            source = translated
        else:
            source = s  # (as written, as nvcc hands it to the host compiler: __FILE__)
        obj = work / (s.name + ".o")
        # A .c file is C in the host compiler's own dialect, as nvcc hands it over; the rest C++20,
        # the emu runtime's, with the standard library's names of the program's standard (prelude.h).
        language = (
            ["-x", "c"]
            if suffix == ".c" and not cuda
            else ["-std=c++20", f"-DCUDALAB_PROGRAM_CPLUSPLUS={b.standard}L"]
        )
        flags = tc["instrument"].split(";") if cuda and checked else ["-g"]
        command = [
            tc["compiler"],
            *language,
            b.optimize,
            *flags,
            "-DCUDALAB_EMU=1",
            *b.defines,
            # The file's own folder for quoted includes only, as nvcc searches it: a program's
            # unistd.h beside it does not hide the system's <unistd.h>.
            f"-iquote{s.resolve().parent}",
            *includes,
            *b.compiler_flags,
            "-c",
            str(source),
            "-o",
            str(obj),
        ]
        if verbose:
            print("+", shlex.join(command), file=sys.stderr)
        if subprocess.run(command).returncode != 0:
            return 1
        objects.append(str(obj))
    if b.compile_only:
        return 0
    # -Xcompiler flags reach the host linker too, as under nvcc (-fopenmp needs it).
    command = [tc["compiler"], *objects, "-o", str(output), *b.compiler_flags, *tc["libraries"]]
    command += [*b.link_flags, *tc["link"]]
    if verbose:
        print("+", shlex.join(command), file=sys.stderr)
    return subprocess.run(command).returncode


def compile_cuda(b: Build, output: Path, verbose: bool) -> int:
    flags = [f for f in b.nvcc_flags if f != "-o"]
    if b.output is not None:
        flags = [f for f in flags if f != str(b.output)]
    command = ["nvcc", "-lineinfo", *flags, "-o", str(output)]
    if verbose:
        print("+", shlex.join(command), file=sys.stderr)
    return subprocess.run(command).returncode


def default_output(b: Build) -> Path:
    """Beside the first source, in .cudalab/: the program finds its data as the samples expect
    (../data from its own folder)."""
    first = b.sources[0].resolve()
    folder = first.parent / ".cudalab"
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        folder = Path(tempfile.gettempdir()) / "cudalab"
        folder.mkdir(exist_ok=True)
    return folder / first.stem


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__)
        return 0 if argv else 2
    command, args = argv[0], argv[1:]
    if command not in ("run", "cc"):
        print(f"cudalab: unknown command {command!r} (run or cc; see cudalab --help)", file=sys.stderr)
        return 2
    program_args: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, program_args = args[:cut], args[cut + 1 :]
    backend, checked, verbose, timeout, report = "emu", True, False, "0", False
    rest: list[str] = []
    i = 0
    while i < len(args):
        if args[i] == "--backend" and i + 1 < len(args):
            backend = args[i + 1]
            i += 2
        elif args[i].startswith("--backend="):
            backend = args[i].split("=", 1)[1]
            i += 1
        elif args[i] == "--unchecked":
            checked = False
            i += 1
        elif args[i] == "--verbose":
            verbose = True
            i += 1
        elif args[i] == "--report":
            report = True
            i += 1
        elif args[i] == "--timeout" and i + 1 < len(args):
            timeout = args[i + 1]
            i += 2
        else:
            rest.append(args[i])
            i += 1
    if backend not in ("emu", "cuda"):
        print(f"cudalab: --backend must be emu or cuda, not {backend!r}", file=sys.stderr)
        return 2
    try:
        b = parse(rest)
    except UsageError as e:
        print(f"cudalab: error: {e}", file=sys.stderr)
        return 2
    if command == "run" and b.compile_only:
        print("cudalab: error: -c builds objects only; use cudalab cc", file=sys.stderr)
        return 2
    output = b.output or (default_output(b) if command == "run" else Path("a.out"))
    if backend == "emu":
        for note in dict.fromkeys(b.notes):
            print(f"cudalab: note: {note}", file=sys.stderr)
        status = compile_emu(b, checked, output, verbose)
    else:
        status = compile_cuda(b, output, verbose)
    if status != 0 or command == "cc":
        return status
    if report and backend == "cuda":
        print("cudalab: note: --report counts on the CPU backend only; running without it", file=sys.stderr)
    if report and backend == "emu":
        return run_with_report(
            output.resolve(), program_args, timeout, [s.resolve().parent for s in b.sources]
        )
    code = run(output.resolve(), program_args, timeout)
    if code == 128 + signal.SIGSEGV and backend == "emu" and not checked:
        print(
            "cudalab: built --unchecked, nothing checked its accesses: run it without --unchecked, "
            "and the checks name the access that faults, with its kernel, thread and line",
            file=sys.stderr,
        )
    return code


def run_with_report(program: Path, args: list[str], timeout: str, folders: list[Path]) -> int:
    """`run` with the emu's counters on, then the page of what they counted (cudalab_tools/report.py)
    beside the program."""
    try:
        from cudalab_tools import report
    except ImportError as e:
        print(
            f"cudalab: error: --report needs {e.name} for {sys.executable} (./setup.sh installs it)",
            file=sys.stderr,
        )
        return 2
    code, stopped, found = execute(program, args, timeout, count=True)
    html = report.render_run(program=program.name, status=code, stopped=stopped, found=found, folders=folders)
    print(
        f"cudalab: report: {report.write(program.with_name(program.name + '.html'), html)}", file=sys.stderr
    )
    return code


def run(program: Path, args: list[str], timeout: str) -> int:
    return execute(program, args, timeout, count=False)[0]


def execute(program: Path, args: list[str], timeout: str, count: bool) -> tuple[int, str, list[dict]]:
    """Runs the program, its output passed through; its exit status (1 when a check stopped a
    kernel and the program did not notice), the check that stopped one, and (`count`: with the
    emu's counters on) the records it wrote (cudalab_tools/records.py)."""
    with tempfile.TemporaryDirectory() as scratch:
        # Reads of memory nobody wrote are warnings here: real programs sometimes read garbage
        # they then ignore (the labs' tests keep them errors).
        written = Path(scratch) / "records.jsonl"
        env = dict(
            os.environ,
            CUDALAB_EMU_TIMEOUT=timeout,
            CUDALAB_EMU_PROGRESS="1",
            CUDALAB_EMU_UNWRITTEN="warn",
            CUDALAB_RECORDS=str(written),
        )
        if count:
            env["CUDALAB_REPORT"] = "1"
        try:
            with subprocess.Popen([str(program), *args], env=env) as process:
                pass
            code = process.returncode
        except KeyboardInterrupt:
            code = 130
        found = records.read_file(written)
    # A failed device assert is the program's own check, which it may handle as it would on a GPU
    # (cudaErrorAssert from the next call): its exit status stays the program's.
    stopped = records.first_error([r for r in found if r.get("check") != "assert"])
    if code < 0:
        print(f"cudalab: {program.name} was killed by signal {-code}", file=sys.stderr)
        code = 128 - code
    elif stopped:
        print(f"cudalab: a check stopped a kernel of {program.name} (the first error):", file=sys.stderr)
        print(f"  {stopped}", file=sys.stderr)
        code = code or 1  # a program that did not notice still fails
    return code, stopped, found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
