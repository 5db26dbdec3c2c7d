#!/usr/bin/env bash
# Installs the Debian packages Iron needs; a machine that has them all installs nothing.
set -euo pipefail

packages=(cmake ninja-build g++ libfmt-dev libcli11-dev nlohmann-json3-dev libgtest-dev
          clang clang-format clang-tidy python3)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: every package is installed"
  exit 0
fi

sudo=()
if ((EUID != 0)); then sudo=(sudo); fi
echo "setup: installing ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  "${missing[@]}"
