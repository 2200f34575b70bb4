#!/usr/bin/env bash
# Installs the system packages the browser tests need: Debian's chromium and a font.
# Idempotent: does nothing when /usr/bin/chromium already exists. Runs apt-get directly as root
# (CI) and through sudo otherwise, when sudo is available.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    echo "install_system_deps: /usr/bin/chromium present, nothing to do"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    echo "install_system_deps: /usr/bin/chromium is missing and this user is not root and has no sudo;" >&2
    echo "install it with: apt-get install chromium fonts-dejavu-core" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_system_deps: apt-get not found; install chromium at /usr/bin/chromium by hand" >&2
    exit 1
fi

echo "install_system_deps: installing chromium and fonts-dejavu-core (a few minutes)"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    chromium fonts-dejavu-core >/dev/null
echo "install_system_deps: done ($(/usr/bin/chromium --version 2>/dev/null || echo chromium))"
