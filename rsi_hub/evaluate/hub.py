"""Fail fast when a suite needs a Hub dataset that cannot be had (offline, not cached)."""

from __future__ import annotations

import os
import threading

from rsi_hub.errors import EvaluationError

_PROBE_TIMEOUT_S = 10.0


def _offline() -> bool:
    return any(
        os.environ.get(var, "").strip().lower() in {"1", "true", "yes", "on"}
        for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )


def _cached(repo_id: str) -> bool:
    """True when the datasets cache holds something of `repo_id` (checked offline, instantly)."""
    from huggingface_hub import scan_cache_dir

    try:
        cache = scan_cache_dir()
    except Exception:  # no cache folder at all
        cache = None
    if cache is not None and any(
        repo.repo_id == repo_id and repo.repo_type == "dataset" for repo in cache.repos
    ):
        return True
    # `datasets` keeps prepared Arrow copies in its own cache, named owner___name.
    from datasets import config

    folder = os.path.join(str(config.HF_DATASETS_CACHE), repo_id.replace("/", "___"))
    return os.path.isdir(folder)


def _reachable(repo_id: str, timeout: float) -> bool:
    """True when the Hub answers about `repo_id` within `timeout` seconds (never hangs longer)."""
    answer: list[bool] = []

    def probe() -> None:
        try:
            from huggingface_hub import HfApi

            HfApi().dataset_info(repo_id, timeout=timeout)
            answer.append(True)
        except Exception:
            answer.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    return bool(answer and answer[0])


def ensure_hub_dataset(repo_id: str, suite: str, *, timeout: float = _PROBE_TIMEOUT_S) -> None:
    """Raise at once, with what to do, when `repo_id` is neither cached nor downloadable.

    Offline (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE set) only the cache is consulted; online the
    Hub must answer within `timeout` seconds, so a machine without network fails in seconds
    instead of hanging in lm-eval's download retries.
    """
    if _cached(repo_id):
        return
    if _offline():
        why = "the Hub is switched off here (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE)"
    elif _reachable(repo_id, timeout):
        return
    else:
        why = f"the Hub did not answer within {timeout:.0f} s"
    hint = (
        "or score PREF offline on other pairs, e.g. --pref-data pref_demo"
        if suite == "pref"
        else "or evaluate the suites that ship with rsi-hub (--suite if818, if263, if3k, ev4)"
    )
    raise EvaluationError(
        f"suite {suite} needs the Hub dataset {repo_id}, which is not in the local cache and "
        f"cannot be downloaded: {why}. Run it once on a machine with network access (the "
        f"download is cached), {hint}."
    )
