#!/usr/bin/env bash
# Installs the Debian packages yoke builds and runs with. Idempotent: does nothing when all are present.
set -euo pipefail
PKGS=(build-essential cmake ninja-build libtorch-dev libopenblas0-pthread libsentencepiece-dev
      nlohmann-json3-dev zlib1g-dev libgtest-dev libcli11-dev libcpp-httplib-dev libgloo-dev pkg-config
      libboost-dev
      # yoke's int8 product (src/model/int8_matmul.h): the headers of the oneDNN LibTorch loads.
      libdnnl-dev
      # Python: `import yoke` (pybind11) and the PyTorch parity module and test (python/yoke_torch.py);
      # sentencepiece lets that module read and write text.
      pybind11-dev python3-dev python3-numpy python3-torch python3-sentencepiece
      # `yoke export --format onnx` (python/yoke_onnx.py): the ONNX checker.
      python3-onnx
      # The CTranslate2 build in ../shared/peers/ctranslate2 (tests/torch/test_ctranslate2_export.cpp,
      # bench/decode_peers.sh): its runtime. Its libopenblas.so.0 comes from libopenblas0-pthread above
      # (what the libopenblas0 metapackage would choose); python3-numpy is listed above.
      libdnnl2 libgomp1)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "yoke: installing ${missing[*]}"
  $SUDO apt-get update -qq
  # --force-unsafe-io: dpkg skips its fsync after every file it unpacks; an install that crashes
  # midway is run again anyway.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-unsafe-io "${missing[@]}"
fi
# ONNX Runtime for node and transformers.js (js/: the ONNX and Hugging Face export tests): ~140 MB
# from npm, some seconds; only where npm is (the tests skip with a message without it).
# ONNXRUNTIME_NODE_INSTALL=skip / --onnxruntime-node-install=skip: onnxruntime-node's postinstall would
# download CUDA 12 libraries from api.nuget.org (a plain npm ci fails where only npm is reachable);
# the CPU runtime yoke uses comes in the npm package.
js_dir="$(cd "$(dirname "$0")/../js" && pwd)"
if command -v npm >/dev/null && { [ ! -d "$js_dir/node_modules/onnxruntime-node" ] ||
                                  [ ! -d "$js_dir/node_modules/@huggingface/transformers" ]; }; then
  (cd "$js_dir" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error \
     --onnxruntime-node-install=skip >/dev/null) || echo "yoke: npm ci in js/ failed: the ONNX Runtime and transformers.js tests will skip" >&2
fi
