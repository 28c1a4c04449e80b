"""The committed Streamlit settings: in git (secrets never), and what they switch off.

The browser test tests/browser/test_offline.py checks their effect in a served app.
"""

from __future__ import annotations

import ast
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


def test_page_scripts_write_nothing_by_magic():
    """Magic is off, and no page script holds a bare expression Streamlit's magic would write on the page.

    (A note written as a string after a constant in views/batch.py was shown above the Batch heading.)
    """
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["magicEnabled"] is False
    bare = []
    for script in [ROOT / "app.py", *sorted((ROOT / "views").glob("*.py"))]:
        tree = ast.parse(script.read_text(encoding="utf-8"))
        bodies = [n.body for n in ast.walk(tree) if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef)]
        docstrings = {
            id(b[0]) for b in bodies if b and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant)
        }
        bare += [
            f"{script.name}:{n.lineno}"
            for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and id(n) not in docstrings and not isinstance(n.value, ast.Call | ast.Await)
        ]
    assert bare == []
