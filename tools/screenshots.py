"""Make the README's screenshots from the browser tests' flows: ``python tools/screenshots.py``.

It runs the browser tests that take screenshots (``streamlit run app.py`` against the fake
judge, driven by Debian's Chromium; see tests/browser/conftest.py), so the pictures show
what the tests check and stay current. Each flow saves the whole app as
``test-artifacts/<name>.png``; this script keeps the top of each shot, scales it down
and stores it with a 128-colour palette as ``docs/screenshots/<page>.png`` (tens of KB).
``--reuse`` skips the flows and remakes the pictures from the last shots.

Exit status: pytest's when a flow fails (no picture is replaced then), else 0.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
DOCS = ROOT / "docs" / "screenshots"
# The flows' screenshot names, the README picture each becomes, and how much of the app
# (px from the top, before scaling) it keeps.
SHOTS = {
    "prompt_alignment_result": ("evaluate", 1720),
    "batch_results": ("batch", 1800),
    "history_run": ("history", 1560),
    "compare_two_variants": ("compare", 1400),
    "review_agreement_panel": ("review", 1200),
    "judges_try_it": ("judges", 1400),
    "catalogue_saved_judge": ("catalogue", 1400),
}
TESTS = [
    "tests/browser/test_evaluate_flow.py::test_prompt_alignment_both_mode_scale_10",
    "tests/browser/test_batch_flow.py",
    "tests/browser/test_compare_flow.py",
    "tests/browser/test_review_flow.py",
    "tests/browser/test_judges_flow.py",
]
WIDTH = 1000  # px of the stored picture (the browser's viewport is 1400 wide)
COLOURS = 128


def shrink(source: Path, target: Path, height: int) -> None:
    """Crop ``source`` to its top ``height`` px, scale it to ``WIDTH`` px wide and save a palette PNG."""
    with Image.open(source) as image:
        image = image.convert("RGB")
        image = image.crop((0, 0, image.width, min(image.height, height)))
        image = image.resize((WIDTH, round(image.height * WIDTH / image.width)), Image.Resampling.LANCZOS)
        image.quantize(colors=COLOURS, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)


def main(argv: list[str]) -> int:
    if "--reuse" not in argv:
        for name in SHOTS:
            (ARTIFACTS / f"{name}.png").unlink(missing_ok=True)
        tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS], cwd=ROOT)
        if tests.returncode != 0:
            print("a flow failed: no picture replaced", file=sys.stderr)
            return tests.returncode
    DOCS.mkdir(parents=True, exist_ok=True)
    for name, (page, height) in SHOTS.items():
        target = DOCS / f"{page}.png"
        shrink(ARTIFACTS / f"{name}.png", target, height)
        print(f"{target.relative_to(ROOT)}: {target.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
