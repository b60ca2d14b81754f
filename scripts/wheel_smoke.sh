#!/usr/bin/env bash
# Wheel smoke test: build the wheel, install it (not editable) into a fresh plain venv, and run
# the main job and raw lm_eval from a folder outside the checkout. It proves that `pip install
# rsi-hub` carries its templates, tasks, release facts and launch files (rsi_hub/shipped.py).
#
#   bash scripts/wheel_smoke.sh [WORK_DIR]     (default: a new folder under /tmp, removed on success)
#
# A plain venv, never --system-site-packages: that would see the editable install of the
# checkout and prove nothing. torch is installed first and pinned (a local CPU wheel); pip's
# cache makes the rest quick.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
keep=${1:+yes}
work=$(realpath -m "${1:-$(mktemp -d /tmp/rsi-hub-wheel-smoke.XXXXXX)}")
case "$work/" in "$repo"/*) echo "wheel_smoke: $work is inside the checkout; pick a folder outside it" >&2; exit 2 ;; esac
mkdir -p "$work"
started=$SECONDS
step() { printf '\n== wheel_smoke [%ss]: %s\n' "$((SECONDS - started))" "$*"; }
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 TOKENIZERS_PARALLELISM=false
unset PYTHONPATH  # the venv must import the installed wheel, not the checkout

step "build the sdist and the wheel (python -m build)"
rm -rf "$work/dist" "$work/venv" "$work/demo" "$work/lm_eval"
python -m build --outdir "$work/dist" "$repo" >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/rsi_hub-*.whl)
echo "$wheel"

step "install it into a fresh venv: torch==2.13.0 first, then the wheel with [train,eval]"
python -m venv "$work/venv"
"$work/venv/bin/pip" install -q torch==2.13.0
"$work/venv/bin/pip" install -q "$wheel[train,eval]"
export PATH="$work/venv/bin:$PATH"
cd "$work"

step "the package and its task folder come from the venv, not the checkout"
package=$(python -c 'import rsi_hub; print(rsi_hub.__file__)')
tasks=$(rsi-hub tasks-path)
echo "rsi_hub: $package"
echo "tasks:   $tasks"
for path in "$package" "$tasks"; do
  case "$path" in "$work/venv/"*) ;; *) echo "wheel_smoke: $path is not inside the venv" >&2; exit 1 ;; esac
done
test -f "$tasks/if818.yaml" && test -f "$tasks/data/prompts_if818.jsonl"

step "bare lm_eval --tasks if818 fails as the README says (no plugin discovery in lm-eval 0.4.13)"
if bare=$(lm_eval --tasks if818 --model hf --model_args pretrained=nowhere 2>&1); then
  echo "wheel_smoke: lm_eval found if818 without --include_path; update the README" >&2; exit 1
fi
grep -F "Tasks not found: if818" <<<"$bare" || { echo "$bare" | tail -20; exit 1; }

# The packaging, not the learning (tests/test_signal.py proves that): a few steps and prompts.
step "rsi-hub demo at a smoke budget (teacher -> nano init -> SFT -> eval both -> release -> chat)"
rsi-hub demo --out "$work/demo" --steps 5 --eval-prompts 4

step "raw lm_eval on the demo's round 0, tasks from rsi-hub tasks-path"
lm_eval --include_path "$(rsi-hub tasks-path)" --tasks if818 --limit 2 --model hf \
  --model_args "pretrained=$work/demo/round0" --apply_chat_template --gen_kwargs max_gen_toks=64 \
  --output_path "$work/lm_eval"
python - "$work/lm_eval" <<'PY'
import json, pathlib, sys
results = sorted(pathlib.Path(sys.argv[1]).rglob("results_*.json"))
assert results, f"lm_eval wrote no results_*.json under {sys.argv[1]}"
if818 = json.loads(results[-1].read_text())["results"]["if818"]
assert "acc,none" in if818 and "pass_count,none" in if818, if818
print(f"lm_eval if818 on 2 prompts: acc {if818['acc,none']}, pass_count {if818['pass_count,none']}")
PY

step "done in $((SECONDS - started)) s"
if [ -z "$keep" ]; then cd / && rm -rf "$work"; else echo "work folder kept: $work"; fi
