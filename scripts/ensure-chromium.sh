#!/bin/sh
# Installs Debian's `chromium` for the browser tests (tests/server/test_browser.py drive it through
# Playwright's Python package; `playwright install` and its downloaded browsers are never used).
# Does nothing when /usr/bin/chromium exists. Installs non-interactively as root (CI) or with passwordless
# sudo; otherwise says how and carries on, and the browser tests report themselves skipped.
set -eu

if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-chromium: no apt-get on this machine; install Chromium as /usr/bin/chromium to run the browser tests" >&2
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "ensure-chromium: run 'sudo apt-get install -y chromium' to run the browser tests" >&2
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
echo "ensure-chromium: installing Debian's chromium for the browser tests" >&2
# A fresh machine (or CI image) often has no package lists yet: refresh them only if the install needs it.
if ! $SUDO apt-get install -y -q --no-install-recommends chromium >/dev/null; then
    $SUDO apt-get update -q >/dev/null
    $SUDO apt-get install -y -q --no-install-recommends chromium >/dev/null
fi
/usr/bin/chromium --version >&2
