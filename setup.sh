#!/usr/bin/env bash
# Installs what cudalab needs from Debian/Ubuntu packages. Safe to run again:
# a package that is already there is reported and left alone.
# The CUDA toolkit is yours to install; without it the CPU backend (emu) is used.
set -euo pipefail

packages=(
  g++ make cmake          # compiler and build
  libgtest-dev libgmock-dev  # GoogleTest: the lab harnesses
  libboost-context-dev    # Boost.Context: GPU threads as fibers on the CPU backend; Boost.Random's Sobol tables
  clang clang-format      # instrumented builds of student code; code style
  libopenblas-dev         # the CPU backend's cuBLAS subset (its arithmetic)
  libthrust-dev           # Thrust for programs on the CPU backend (its C++ system)
  libcub-dev              # CUB for programs on the CPU backend (with the emu's own PTX layer)
  python3 python3-matplotlib python3-numpy  # make check's summary, the grader's plots
  python3-jinja2          # make check's report page (HTML)
  python3-pytest          # the grader's tests
  python3-pip             # installs requirements.txt (libclang) into .deps/python
  bubblewrap              # the grader's sandbox for students' code
)

missing=()
for p in "${packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    echo "ok       $p"
  else
    echo "missing  $p"
    missing+=("$p")
  fi
done

# Python packages of requirements.txt, into .deps/python (read by the tools; not the system's).
python_packages() {
  local here target
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  target="$here/.deps/python"
  if [ -f "$target/.requirements" ] && cmp -s "$here/requirements.txt" "$target/.requirements"; then
    echo "ok       requirements.txt (in .deps/python)"
    return
  fi
  echo "setup: installing requirements.txt into .deps/python"
  rm -rf "$target"
  PIP_ROOT_USER_ACTION=ignore /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --target "$target" -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$target/.requirements"
  echo "installed requirements.txt"
}

if [ ${#missing[@]} -eq 0 ]; then
  python_packages
  echo "setup: everything is installed."
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: error: apt-get not found; install these packages with your system's package manager: ${missing[*]}" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "setup: error: installing packages needs root; run as root or install sudo. Missing: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for p in "${missing[@]}"; do echo "installed $p"; done
python_packages
