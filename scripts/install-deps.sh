#!/usr/bin/env bash
# Installs the Debian packages yoke builds and runs with. Idempotent: does nothing when all are present.
set -euo pipefail
PKGS=(build-essential cmake libtorch-dev libopenblas0-pthread libsentencepiece-dev
      nlohmann-json3-dev zlib1g-dev libgtest-dev libcli11-dev libcpp-httplib-dev libgloo-dev pkg-config
      libboost-dev
      # Python: `import yoke` (pybind11) and the PyTorch parity module and test (python/yoke_torch.py);
      # sentencepiece lets that module read and write text.
      pybind11-dev python3-dev python3-numpy python3-torch python3-sentencepiece)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "yoke: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
