#!/usr/bin/env bash
# cmake --install gives outside projects find_package(cudalab), cudalab_add_executable() and an
# installed `cudalab`: install this build into a scratch prefix, build an outside project with it,
# and run the program both ways (its checks on: a planted bug is named with its line).
#   test_package.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" > /dev/null
cmake -S "$here/package" -B "$scratch/project" -DCMAKE_PREFIX_PATH="$scratch/prefix" > /dev/null
cmake --build "$scratch/project" -j 2 > /dev/null
"$scratch/project/vector_add" 100 | grep -q "0 of 100 elements wrong"
echo "find_package(cudalab): the outside project's program runs"
"$scratch/prefix/bin/cudalab" run -DPAST_THE_END "$here/programs/vector_add.cu" -o "$scratch/bug" \
  -- 100 > "$scratch/out" 2>&1 && { cat "$scratch/out"; echo "error: the planted bug passed"; exit 1; }
grep -q "vector_add_kernel.cuh:[0-9]*: a read of memory outside every array" "$scratch/out"
echo "installed cudalab run: the planted bug is named with its line"
