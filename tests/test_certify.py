"""Judge certification (Rogan–Gladen, TPR/TNR) and inter-reviewer agreement (Krippendorff's alpha), by hand."""

from __future__ import annotations

import pytest

from scorers import EvalItem, Store, create_textual_difference_scorer, run_evals
from scorers.analysis.certify import certify_judge, krippendorff_alpha, krippendorff_interval, rogan_gladen
from scorers.analysis.labels import save_label
from scorers.analysis.report import run_report


def test_rogan_gladen_with_a_known_confusion_matrix():
    # Labelled rows: people pass 50 (the judge passes 40: TPR = 0.8), people fail 50 (the judge fails 45:
    # TNR = 0.9). The judge passes 60 of the run's 100 rows: p = 0.6.
    # Corrected = (p + TNR − 1) / (TPR + TNR − 1) = (0.6 + 0.9 − 1) / (0.8 + 0.9 − 1) = 0.5 / 0.7 = 0.714286.
    human = [True] * 50 + [False] * 50
    judge = [True] * 40 + [False] * 10 + [False] * 45 + [True] * 5
    run = [True] * 60 + [False] * 40
    cert = certify_judge(human, judge, run, level=0.65, n_resamples=300)
    assert (cert.tpr.hits, cert.tpr.n, cert.tpr.value) == (40, 50, pytest.approx(0.8))
    assert (cert.tnr.hits, cert.tnr.n, cert.tnr.value) == (45, 50, pytest.approx(0.9))
    assert cert.raw_rate.value == pytest.approx(0.6)
    assert cert.corrected == pytest.approx(0.5 / 0.7)
    assert cert.corrected_low <= cert.corrected <= cert.corrected_high
    # Wilson 95% interval of 40/50, z = 1.959964, z² = 3.841459: centre (p + z²/2n)/(1 + z²/n)
    # = (0.8 + 0.0384146)/1.0768292 = 0.778596; half-width z·sqrt(p(1−p)/n + z²/4n²)/(1 + z²/n)
    # = 1.959964·sqrt(0.0032 + 0.00038415)/1.0768292 = 0.108967 → 0.669629 .. 0.887563.
    assert (cert.tpr.low, cert.tpr.high) == (pytest.approx(0.669629, abs=2e-6), pytest.approx(0.887563, abs=2e-6))
    # Both lower bounds reach 0.65 (TNR's Wilson low for 45/50 is 0.786): good enough at 65%.
    assert cert.verdict == "good enough"
    # At 75% the TPR interval 0.670 .. 0.888 straddles the level: not known yet.
    assert certify_judge(human, judge, run, level=0.75, n_resamples=10).verdict == "not known yet"
    assert "Rogan–Gladen" in cert.explanation and "71%" in cert.explanation
    # At 90% the TPR's upper bound 0.888 is below the level: not good enough.
    assert certify_judge(human, judge, run, level=0.9, n_resamples=10).verdict == "not good enough"
    assert rogan_gladen(0.5, 0.5, 0.5) is None  # a coin: nothing to correct with
    assert rogan_gladen(0.95, 0.8, 0.9) == 1.0  # (0.95 + 0.9 − 1)/0.7 = 1.21 → clipped


def test_certify_needs_both_classes():
    cert = certify_judge([True, True], [True, False], [True, False, True], n_resamples=10)
    assert cert.verdict == "not known yet" and "people fail" in cert.explanation
    assert cert.corrected is None


def test_krippendorff_alpha_by_hand():
    # Units (a,a), (a,b), (b,b), (b,b): coincidences o_aa = 2, o_ab = o_ba = 1, o_bb = 4; n_a = 3, n_b = 5, n = 8.
    # D_o = (o_ab + o_ba)/n = 2/8; D_e = (n_a n_b + n_b n_a)/(n(n − 1)) = 30/56; α = 1 − (2/8)/(30/56) = 16/30.
    units = [["pass", "pass"], ["pass", "fail"], ["fail", "fail"], ["fail", "fail"]]
    assert krippendorff_alpha(units) == pytest.approx(16 / 30)
    # A unit with one value is not pairable and changes nothing.
    assert krippendorff_alpha([*units, ["pass"]]) == pytest.approx(16 / 30)
    # Interval level on scores: units (1,1), (0,1), (0,0): o_11 = 2, o_01 = o_10 = 1, o_00 = 2; n_0 = n_1 = 3, n = 6.
    # D_o = 2·1/6 = 1/3; D_e = 2·3·3·1/(6·5) = 18/30 = 0.6; α = 1 − (1/3)/0.6 = 4/9.
    assert krippendorff_alpha([[1, 1], [0, 1], [0, 0]], level="interval") == pytest.approx(4 / 9)
    assert krippendorff_alpha([["pass", "pass"]]) is None  # no disagreement possible
    low, high = krippendorff_interval(units, n_resamples=200)
    assert -1 <= low <= 16 / 30 <= high <= 1


def test_the_run_report_has_labels_and_agreement(tmp_path):
    # Two reviewers on a textual-difference run (judge: "abc" vs "abc" → 1, "xyz" → 0; threshold 0.5).
    store = Store(tmp_path / "s.db")
    items = [
        EvalItem(f"row{n}", {"input": "q", "output": {"text": t}, "ground_truth": "abc"})
        for n, t in enumerate(["abc", "xyz"])
    ]
    run_id = run_evals(items, [create_textual_difference_scorer()], store=store).run_id
    save_label(store, run_id, 0, "textual-difference", reviewer="ann", human_pass=True, comment="right")
    save_label(store, run_id, 1, "textual-difference", reviewer="ann", human_pass=False)
    save_label(store, run_id, 1, "textual-difference", reviewer="bo", human_pass=False)
    html = run_report(store, run_id)
    store.close()
    assert "Agreement with people" in html and "Labels" in html
    assert "right" in html and "bo" in html
