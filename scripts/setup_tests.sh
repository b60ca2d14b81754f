#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine (CPU only).
# torch first and pinned: an unpinned torch pulled in by another package is a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
# The sandbox tests run answers as `nobody`, importing rsi_hub from this checkout: a checkout
# made with `mktemp -d` is mode 0700 and unreadable to that user, so open it for reading.
chmod a+rx . 2>/dev/null || true
pip install -q torch==2.13.0
pip install -q -e ".[dev]"
# Debian packages: Chromium for the Space's browser test (Playwright drives it; never
# `playwright install`), bubblewrap, the sandbox that runs code_tests answers, and Slurm with
# munge for the `slurm` tests' one-node cluster (scripts/slurm_local.sh starts it).
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v slurmctld >/dev/null || missing+=(slurmctld)
command -v slurmd >/dev/null || missing+=(slurmd)
command -v sbatch >/dev/null || missing+=(slurm-client)
command -v munged >/dev/null || missing+=(munge)
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) || echo "warning: could not install ${missing[*]}; browser, sandbox or slurm tests will fail with a clear message" >&2
fi
