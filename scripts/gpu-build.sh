#!/usr/bin/env bash
# Builds yoke with CUDA against the LibTorch that ships inside the installed PyTorch wheel, and
# optionally runs the test suite. For a machine with a GPU, PyTorch and CMake but no apt access:
# the few other libraries yoke needs (SentencePiece, nlohmann-json, GoogleTest, zlib, CLI11, cpp-httplib, Boost)
# come as Debian packages unpacked with `dpkg -x` into a private prefix, no root needed.
#
#   scripts/gpu-build.sh --fetch-debs DIR   on a Debian 12 machine with apt: download those packages
#   scripts/gpu-build.sh [--debs DIR] [--test] [--build-dir DIR] [--target T ...]
#        --debs DIR   unpack DIR/*.deb into BUILD/prefix first (skip when the machine has the libraries)
#        --test       run the whole test suite afterwards (ctest)
#        --build-dir  where to build (default build-gpu)
#        --target T   build only T (repeatable; e.g. `--target yoke --target yoke_spm` for training
#                     alone, which leaves out the test binaries and saves minutes of a short lease)
# Environment: PYTHON (default python3) is the interpreter whose torch is used.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libsentencepiece0 libsentencepiece-dev libgtest-dev googletest nlohmann-json3-dev zlib1g-dev libcli11-dev
          libcpp-httplib0.11 libcpp-httplib-dev libbrotli1 libbrotli-dev libssl3 libssl-dev libboost1.74-dev)
debs="" test=0 build=build-gpu targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --fetch-debs)
      mkdir -p "$2"
      (cd "$2" && apt-get download "${packages[@]}")
      echo "fetched into $2: carry it to the GPU machine and run scripts/gpu-build.sh --debs $2"
      exit 0 ;;
    --debs) debs="$2"; shift ;;
    --test) test=1 ;;
    --build-dir) build="$2"; shift ;;
    --target) targets+=(--target "$2"); shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "gpu-build.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

PYTHON=${PYTHON:-python3}
read -r torch_prefix torch_version cuda_version cxx11_abi < <("$PYTHON" -c '
import torch
print(torch.utils.cmake_prefix_path, torch.__version__, torch.version.cuda, int(torch.compiled_with_cxx11_abi()))') || {
  echo "gpu-build.sh: $PYTHON cannot import torch; set PYTHON to the interpreter with PyTorch" >&2; exit 1; }
if [ "$cuda_version" = "None" ]; then
  echo "gpu-build.sh: torch $torch_version has no CUDA; scripts/build.sh builds the CPU version" >&2
  exit 1
fi
if [ "$cxx11_abi" != 1 ]; then
  echo "gpu-build.sh: torch $torch_version uses the pre-C++11 string ABI; Debian's libraries need the new one" >&2
  exit 1
fi
echo "LibTorch $torch_version (CUDA $cuda_version) from $torch_prefix"

prefix_path="$torch_prefix"
if [ -n "$debs" ]; then
  prefix="$PWD/$build/prefix"
  mkdir -p "$prefix"
  for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix"; done
  prefix_path="$prefix_path;$prefix/usr"
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix_path" \
  -DCMAKE_CUDA_ARCHITECTURES=native >"$build.configure.log" 2>&1 || { cat "$build.configure.log" >&2; exit 1; }
cmake --build "$build" "${targets[@]}" -j "$(nproc)" ${generator:+-- -k 0}  # every compile error at once
echo "built $build/yoke with CUDA: train/translate/eval-lm/generate take device = cuda (or --device cuda)"
if [ "$test" = 1 ]; then
  # Several test processes at once, two threads each: a process per core with a thread per
  # core would oversubscribe the CPU many times over.
  jobs=$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))
  cd "$build" && OMP_NUM_THREADS=2 ctest --output-on-failure -j "$jobs" --timeout 900
fi
