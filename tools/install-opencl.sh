#!/usr/bin/env bash
# Installs a CPU OpenCL platform (pocl) and the loader JOCL opens (libOpenCL.so, which only Debian's -dev
# package links), so that the OpenCL tests run. Does nothing when they are there; when it cannot install
# (no root, no package manager) it says so and the OpenCL suites skip themselves, naming the reason.
set -uo pipefail
packages=(pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev)
missing=()
for p in "${packages[@]}"; do
  # A removed package keeps a dpkg entry (its config files): only "install ok installed" counts.
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
    echo "install-opencl: not root and no sudo: ${missing[*]} not installed; the OpenCL tests will be skipped" >&2
    exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-opencl: no apt-get: ${missing[*]} not installed; the OpenCL tests will be skipped" >&2
  exit 0
fi
echo "install-opencl: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y -q "${missing[@]}" >/dev/null; then
  $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q "${missing[@]}" >/dev/null \
    || echo "install-opencl: installing ${missing[*]} failed; the OpenCL tests will be skipped" >&2
fi
exit 0
