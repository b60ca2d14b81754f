#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine (CPU only).
# torch first and pinned: an unpinned torch pulled in by another package is a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
pip install -q torch==2.13.0
pip install -q -e ".[dev]"
# Debian's Chromium for the Space's browser test (Playwright drives it; never `playwright install`).
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "warning: chromium not installed; browser tests will fail with a clear message" >&2
fi
