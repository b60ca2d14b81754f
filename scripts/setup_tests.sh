#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine (CPU only).
# torch first and pinned: an unpinned torch pulled in by another package is a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
pip install -q torch==2.13.0
pip install -q -e ".[dev]"
# Debian packages: Chromium for the Space's browser test (Playwright drives it; never
# `playwright install`) and bubblewrap, the sandbox that runs code_tests answers.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v bwrap >/dev/null || missing+=(bubblewrap)
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null) || echo "warning: could not install ${missing[*]}; browser or sandbox tests will fail with a clear message" >&2
fi
