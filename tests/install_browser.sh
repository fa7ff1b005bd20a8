#!/usr/bin/env bash
# Installs Debian's chromium for the real-browser tests if it is missing (Playwright's own browser
# download cannot reach its servers here; the tests drive /usr/bin/chromium instead).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
