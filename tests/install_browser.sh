#!/usr/bin/env bash
# Installs what the tests drive outside Python, from Debian, when it is missing:
# - chromium for the real-browser tests (Playwright's own browser download cannot reach its servers here; the
#   tests drive /usr/bin/chromium instead);
# - haproxy for the class server's test (tests/deploy: deploy/class_server.py puts it in front of the processes);
# - redis-server for the lecture store's tests (tests/lecture/test_store_contract.py starts one on loopback) and the
#   class server's (which starts its own for the shared lecture rooms).
# - node (Debian's nodejs) for the heatmap JS checks (tests/components/test_heatmap_js.py), which fail without it;
# - npm, and with it axe-core (pinned: tests/axe_check.py's AXE_VERSION) into .node/ in the project (git-ignored), for
#   the accessibility walks (tests/browser/test_browser.py, test_browser_lecture_walk.py), which fail without it.
set -euo pipefail
cd "$(dirname "$0")/.."
AXE_VERSION=4.14.1
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  /usr/bin/chromium --version
  /usr/sbin/haproxy -v | head -1
  redis-server --version
  node --version
fi
installed=$(node -p "require('./.node/node_modules/axe-core/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$AXE_VERSION" ]; then
  npm install --prefix .node --no-save --no-package-lock --no-audit --no-fund --loglevel=error "axe-core@$AXE_VERSION"
  echo "axe-core $AXE_VERSION in .node/"
fi
