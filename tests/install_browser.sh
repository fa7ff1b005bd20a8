#!/usr/bin/env bash
# Installs what the tests drive outside Python, from Debian, when it is missing:
# - chromium for the real-browser tests (Playwright's own browser download cannot reach its servers here; the
#   tests drive /usr/bin/chromium instead);
# - haproxy for the class server's test (tests/deploy: deploy/class_server.py puts it in front of the processes);
# - redis-server for the lecture store's tests (tests/lecture/test_store_contract.py starts one on loopback) and the
#   class server's (which starts its own for the shared lecture rooms).
# - node (Debian's nodejs) for the heatmap JS checks (tests/components/test_heatmap_js.py), which fail without it.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
/usr/bin/chromium --version
/usr/sbin/haproxy -v | head -1
redis-server --version
node --version
