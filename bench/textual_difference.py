"""Benchmark the textual difference scorer against a plain Python LCS.

Run from the repository root: ``python bench/textual_difference.py``.

Text pairs of about 1k, 10k and 100k characters are cut from the IFEval GPT-4
responses copied into ``tests/data``, or built from seeded random words when that
data is absent; the response is the reference with
about 5% of its words replaced, deleted or inserted. For each size the scorer's
best time over a few runs is printed next to a plain ``O(n*m)`` dynamic-programme
LCS computing the same character ratio. The baseline runs only where its time,
extrapolated from a 2k-character calibration, fits a per-size budget; elsewhere
the table says why it was skipped. Nothing here asserts on time.
"""

from __future__ import annotations

import itertools
import json
import random
import resource
import sys
import time
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scorers.catalogue.textual_difference import create_textual_difference_scorer  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
BASELINE_BUDGET_S = 60.0
SCORER_REPEATS = 5
EDIT_RATE = 0.05
IFEVAL_RESPONSES = Path("ifeval_gpt4") / "input_response_data_gpt4_20231107_145030.jsonl"


def lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence, by the textbook row-by-row programme."""
    previous = [0] * (len(b) + 1)
    for ch in a:
        current = [0]
        left = 0
        for j, other in enumerate(b):
            left = previous[j] + 1 if ch == other else max(previous[j + 1], left)
            current.append(left)
        previous = current
    return previous[-1]


def baseline_ratio(a: str, b: str) -> float:
    total = len(a) + len(b)
    return 2 * lcs_length(a, b) / total if total else 1.0


def source_text() -> tuple[str, str]:
    """About 190k characters of real English prose (120 IFEval responses), or seeded random words without the data."""
    path = REPO / "tests" / "data" / IFEVAL_RESPONSES
    if path.is_file():
        with path.open(encoding="utf-8") as lines:
            text = " ".join(json.loads(line)["response"] for line in lines)
        return unicodedata.normalize("NFC", text), f"IFEval GPT-4 responses ({path})"
    rng = random.Random(0)
    vocabulary = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 9))) for _ in range(3000)
    ]
    return " ".join(rng.choice(vocabulary) for _ in range(150_000)), "seeded random words (no real data found)"


def make_pair(text: str, size: int, rng: random.Random) -> tuple[str, str]:
    """A reference of ``size`` characters and a response with ~5% of its words edited."""
    start = rng.randrange(len(text) - size)
    reference = text[start : start + size]
    words = reference.split()
    vocabulary = text[:50_000].split()
    edited: list[str] = []
    for word in words:
        roll = rng.random()
        if roll < EDIT_RATE / 3:
            edited.append(rng.choice(vocabulary))
        elif roll < 2 * EDIT_RATE / 3:
            continue
        elif roll < EDIT_RATE:
            edited.extend([word, rng.choice(vocabulary)])
        else:
            edited.append(word)
    return reference, " ".join(edited)


def best_time(function, repeats: int) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - started)
    return best, value


def main() -> None:
    text, origin = source_text()
    rng = random.Random(20231107)
    scorer = create_textual_difference_scorer()
    print(f"text source: {origin}")
    print(f"scorer: best of {SCORER_REPEATS} runs; baseline: plain Python O(n*m) LCS, one run")

    # 2k characters: large enough that most DP values are uncached ints, as in the 10k run.
    calibration_a, calibration_b = make_pair(text, 2_000, rng)
    calibration_s, _ = best_time(lambda: lcs_length(calibration_a, calibration_b), 1)
    seconds_per_cell = calibration_s / (len(calibration_a) * len(calibration_b))
    print(f"baseline calibration: {seconds_per_cell * 1e9:.0f} ns per DP cell; budget {BASELINE_BUDGET_S:.0f} s")
    print()

    header = ("chars a/b", "words a/b", "changes", "ratio", "scorer s", "baseline s", "baseline/scorer")
    rows = [header]
    notes = []
    for size in SIZES:
        a, b = make_pair(text, size, rng)
        payload = {"input": "benchmark", "output": b, "ground_truth": a}
        scorer_s, result = best_time(lambda payload=payload: scorer.run(payload), SCORER_REPEATS)
        ratio = result.analyze_step_result["ratio"]
        estimate_s = seconds_per_cell * len(a) * len(b)
        if estimate_s <= BASELINE_BUDGET_S:
            baseline_s, expected = best_time(lambda a=a, b=b: baseline_ratio(a, b), 1)
            if abs(expected - ratio) > 1e-12:
                raise SystemExit(f"ratio mismatch at {size} chars: scorer {ratio!r}, baseline {expected!r}")
            baseline_cell, speedup = f"{baseline_s:.3f}", f"{baseline_s / scorer_s:,.0f}x"
        else:
            baseline_cell, speedup = "skipped", "-"
            notes.append(
                f"{size:,} chars: baseline skipped, estimated {estimate_s:,.0f} s "
                f"({estimate_s / 3600:.1f} h) > budget {BASELINE_BUDGET_S:.0f} s"
            )
        rows.append(
            (
                f"{len(a):,}/{len(b):,}",
                f"{len(a.split()):,}/{len(b.split()):,}",
                str(result.analyze_step_result["changes"]),
                f"{ratio:.4f}",
                f"{scorer_s:.4f}",
                baseline_cell,
                speedup,
            )
        )

    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in itertools.chain(rows[:1], [tuple("-" * w for w in widths)], rows[1:]):
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))
    print()
    for note in notes:
        print(f"note: {note}")
    print("ratios agree with the baseline to 1e-12 wherever it ran")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
