"""The committed Streamlit settings: in git (secrets never), and what they switch off.

The browser test tests/browser/test_offline.py checks their effect in a served app.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def ignored(path: str) -> bool:
    """Whether git ignores ``path`` (relative to the repository)."""
    result = subprocess.run(["git", "check-ignore", "--quiet", "--no-index", path], cwd=ROOT)
    assert result.returncode in (0, 1), f"git check-ignore failed for {path}"
    return result.returncode == 0


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_config_is_committed_and_secrets_are_ignored():
    assert not ignored(".streamlit/config.toml")
    assert ignored(".streamlit/secrets.toml")


def test_config_hides_the_deploy_button_and_sends_no_usage_statistics():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["toolbarMode"] == "minimal"
    assert config["browser"]["gatherUsageStats"] is False
