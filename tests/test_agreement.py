"""scorers.analysis.agreement: statistics worked by hand and checked against scipy; re-judging through the fake judge.

scikit-learn is not a dependency, so Cohen's kappa is checked against tables worked by hand.
"""

from __future__ import annotations

import itertools
import math
import random
import threading
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import settings_for
from scipy import stats

from dashboard.agreement_charts import calibration_chart, confusion_heatmap, consistency_chart
from dashboard.distributions import figure_messages
from scorers import EvalItem, Store, create_scorer, run_evals
from scorers.analysis.agreement import (
    MIN_MEANINGFUL,
    AgreementRow,
    Confusion,
    agreement_report,
    agreement_rows,
    calibration_bins,
    cohen_kappa,
    confusion,
    consistency_report,
    correlation,
    disagreements,
    human_verdict,
    mean_absolute_error,
    passes,
    rejudge,
    sample_indexes,
)
from scorers.analysis.labels import current_labels, save_label


def table(both_pass: int, judge_pass_human_fail: int, judge_fail_human_pass: int, both_fail: int):
    """Judge and human verdict lists with the given 2×2 counts."""
    judge = [True] * both_pass + [True] * judge_pass_human_fail + [False] * judge_fail_human_pass + [False] * both_fail
    human = [True] * both_pass + [False] * judge_pass_human_fail + [True] * judge_fail_human_pass + [False] * both_fail
    return judge, human


# ---- Cohen's kappa


def test_kappa_on_a_two_by_two_table_worked_by_hand():
    #               human pass  human fail
    # judge pass         4           1
    # judge fail         2           3          n = 10
    # p_o = (4 + 3) / 10 = 0.7
    # judge passes 5/10 = 0.5, people pass 6/10 = 0.6
    # p_e = 0.5·0.6 + 0.5·0.4 = 0.3 + 0.2 = 0.5
    # κ = (0.7 − 0.5) / (1 − 0.5) = 0.4
    judge, human = table(4, 1, 2, 3)
    k = cohen_kappa(judge, human)
    assert k.n == 10
    assert k.p_observed == pytest.approx(0.7)
    assert k.p_expected == pytest.approx(0.5)
    assert k.value == pytest.approx(0.4)
    assert k.reason == ""


def test_kappa_with_unbalanced_margins_worked_by_hand():
    #               human pass  human fail
    # judge pass         6           2
    # judge fail         1           1          n = 10
    # p_o = (6 + 1) / 10 = 0.7
    # judge passes 8/10, people pass 7/10
    # p_e = 0.8·0.7 + 0.2·0.3 = 0.56 + 0.06 = 0.62
    # κ = (0.7 − 0.62) / (1 − 0.62) = 0.08 / 0.38 = 0.210526...
    judge, human = table(6, 2, 1, 1)
    k = cohen_kappa(judge, human)
    assert k.p_observed == pytest.approx(0.7)
    assert k.p_expected == pytest.approx(0.62)
    assert k.value == pytest.approx(0.08 / 0.38)


def test_kappa_is_symmetric_and_perfect_and_below_chance():
    judge, human = table(4, 1, 2, 3)
    assert cohen_kappa(human, judge).value == pytest.approx(0.4)
    # Perfect agreement with both classes: p_o = 1, p_e = 0.5·0.5 + 0.5·0.5 = 0.5 → κ = 1.
    assert cohen_kappa(*table(2, 0, 0, 2)).value == pytest.approx(1.0)
    # Complete disagreement: p_o = 0, p_e = 0.5·0.5 + 0.5·0.5 = 0.5 → κ = (0 − 0.5)/0.5 = −1.
    assert cohen_kappa(*table(0, 2, 2, 0)).value == pytest.approx(-1.0)


def test_kappa_when_one_rater_uses_one_class_is_zero_not_undefined():
    # The judge passes all 4; people pass 3 and fail 1.
    # p_o = 3/4 = 0.75; p_e = 1·0.75 + 0·0.25 = 0.75; κ = (0.75 − 0.75)/(1 − 0.75) = 0.
    k = cohen_kappa([True] * 4, [True, True, True, False])
    assert k.value == pytest.approx(0.0)
    assert k.p_expected == pytest.approx(0.75)


def test_kappa_is_undefined_when_everything_is_one_class():
    # p_o = 1 and p_e = 1·1 = 1: κ = 0/0.
    k = cohen_kappa([True] * 5, [True] * 5)
    assert k.value is None
    assert k.p_observed == 1.0 and k.p_expected == 1.0
    assert "one class (pass)" in k.reason and "undefined" in k.reason
    failing = cohen_kappa([False] * 3, [False] * 3)
    assert failing.value is None and "(fail)" in failing.reason


def test_kappa_without_rows_and_with_unequal_lengths():
    empty = cohen_kappa([], [])
    assert empty.value is None and empty.n == 0 and empty.reason
    with pytest.raises(ValueError, match="3 vs 2 rows"):
        cohen_kappa([True, False, True], [True, False])


def test_kappa_works_on_any_classes():
    # Three classes, n = 6: agree on rows 1, 2, 4, 6 → p_o = 4/6.
    # a: x x y y z z   (1/3 each)    b: x x y z z x  (x 1/2, y 1/6, z 1/3)
    # p_e = 1/3·1/2 + 1/3·1/6 + 1/3·1/3 = 1/6 + 1/18 + 1/9 = 1/3
    # κ = (2/3 − 1/3)/(1 − 1/3) = 0.5
    k = cohen_kappa(list("xxyyzz"), list("xxyzzx"))
    assert k.p_observed == pytest.approx(4 / 6)
    assert k.p_expected == pytest.approx(1 / 3)
    assert k.value == pytest.approx(0.5)


# ---- correlations and error


def test_correlations_worked_by_hand():
    x, y = [1, 2, 3, 4, 5], [2, 4, 5, 4, 5]
    # Pearson: dx = −2 −1 0 1 2, dy = −2 0 1 0 1 (mean y = 4); Σdxdy = 6, Σdx² = 10, Σdy² = 6
    # r = 6 / √60 = 0.774597
    assert correlation(x, y, method="pearson").value == pytest.approx(6 / math.sqrt(60))
    # Spearman: ranks of y = 1, 2.5, 4.5, 2.5, 4.5 (ties share ranks), mean 3;
    # Σdxdy = 4 + 0.5 + 0 − 0.5 + 3 = 7, Σdy² = 4 + .25 + 2.25 + .25 + 2.25 = 9; ρ = 7 / √90 = 0.737865
    assert correlation(x, y, method="spearman").value == pytest.approx(7 / math.sqrt(90))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_correlations_match_scipy(seed):
    rng = random.Random(seed)
    judge = [round(rng.random(), 2) for _ in range(25)]
    human = [min(1.0, max(0.0, j + rng.gauss(0, 0.2))) for j in judge]
    spearman, pearson = stats.spearmanr(judge, human), stats.pearsonr(judge, human)
    s = correlation(judge, human, method="spearman")
    p = correlation(judge, human, method="pearson")
    assert s.value == pytest.approx(spearman.statistic) and s.p_value == pytest.approx(spearman.pvalue)
    assert p.value == pytest.approx(pearson.statistic) and p.p_value == pytest.approx(pearson.pvalue)
    assert s.n == p.n == 25


def test_correlation_of_constant_scores_is_undefined_not_nan():
    judge = correlation([0.5, 0.5, 0.5], [0.1, 0.6, 0.9])
    assert judge.value is None and judge.p_value is None
    assert "every judge score is 0.5" in judge.reason
    human = correlation([0.1, 0.6, 0.9], [1, 1, 1], method="pearson")
    assert human.value is None and "every human score is 1" in human.reason
    one = correlation([0.3], [0.4])
    assert one.value is None and "at least 2" in one.reason
    with pytest.raises(ValueError, match="unknown correlation method"):
        correlation([1, 2], [1, 2], method="kendall")


def test_mean_absolute_error_by_hand():
    # |0.9 − 1.0| + |0.2 − 0.0| + |0.6 − 0.6| = 0.1 + 0.2 + 0 = 0.3; / 3 = 0.1
    assert mean_absolute_error([0.9, 0.2, 0.6], [1.0, 0.0, 0.6]) == pytest.approx(0.1)
    assert mean_absolute_error([], []) is None


# ---- verdicts, confusion, calibration, disagreements


def test_verdicts_at_the_threshold():
    assert passes(0.5, 0.5) and not passes(0.49, 0.5)
    assert passes(0.1, 0.3, higher_is_better=False) and not passes(0.4, 0.3, higher_is_better=False)
    row = AgreementRow(0, "a", 0.9, human_score=0.2, human_pass=True)
    assert human_verdict(row, 0.5) is True  # an explicit verdict wins over the score
    assert human_verdict(AgreementRow(0, "a", 0.9, human_score=0.6), 0.5) is True
    assert human_verdict(AgreementRow(0, "a", 0.9, human_score=0.4), 0.5) is False
    assert human_verdict(AgreementRow(0, "a", 0.9), 0.5) is None


def test_confusion_matrix_counts():
    judge, human = table(4, 1, 2, 3)
    c = confusion(judge, human)
    # Rows: people (pass, fail); columns: judge (pass, fail).
    assert c.matrix() == [[4, 2], [1, 3]]
    assert c.n == 10


def test_calibration_bins_by_hand():
    scores = [0.05, 0.15, 0.45, 0.55, 0.95, 1.0]
    verdicts = [False, False, True, False, True, True]
    bins = calibration_bins(scores, verdicts, scale=1.0, n_bins=4)
    # [0, .25): .05 F, .15 F → 0/2; [.25, .5): .45 T → 1/1; [.5, .75): .55 F → 0/1; [.75, 1]: .95 T, 1.0 T → 2/2
    assert [(b.lo, b.hi) for b in bins] == [(0.0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.0)]
    assert [(b.n, b.n_pass) for b in bins] == [(2, 0), (1, 1), (1, 0), (2, 2)]
    assert [b.pass_rate for b in bins] == [0.0, 1.0, 0.0, 1.0]
    assert bins[0].mean_judge_score == pytest.approx(0.1)
    empty = calibration_bins([9.0], [True], scale=10, n_bins=5)
    assert [b.n for b in empty] == [0, 0, 0, 0, 1] and empty[1].pass_rate is None
    with pytest.raises(ValueError):
        calibration_bins([0.1], [True], scale=0)


def test_disagreements_sorted_by_gap_with_verdict_only_labels_at_the_ends_of_the_scale():
    rows = [
        AgreementRow(0, "a", 0.9, human_score=0.8),  # gap 0.1
        AgreementRow(1, "b", 0.7, human_pass=False),  # fail → 0: gap 0.7
        AgreementRow(2, "c", 0.2, human_pass=True),  # pass → 1: gap 0.8
        AgreementRow(3, "d", 0.4, human_score=0.1),  # gap 0.3
    ]
    ranked = disagreements(rows, threshold=0.5)
    assert [d.row.item_id for d in ranked] == ["c", "b", "d", "a"]
    assert [d.gap for d in ranked] == pytest.approx([0.8, 0.7, 0.3, 0.1])
    assert ranked[0].human_value == 1.0 and ranked[0].judge_pass is False and ranked[0].human_pass is True
    # Lower is better (e.g. toxicity): pass points at 0, fail at the scale's top.
    flipped = disagreements([AgreementRow(0, "t", 0.2, human_pass=False)], threshold=0.5, higher_is_better=False)
    assert flipped[0].human_value == 1.0 and flipped[0].gap == pytest.approx(0.8)


# ---- the report


def test_report_on_ten_rows_worked_by_hand():
    # Judge scores and human verdicts at t = 0.5 giving the 4/1/2/3 table of the first test:
    judge_scores = [0.9, 0.8, 0.7, 0.6, 0.55, 0.4, 0.3, 0.2, 0.1, 0.0]
    human_pass = [True, True, True, True, False, True, True, False, False, False]
    rows = [
        AgreementRow(i, f"r{i}", s, human_pass=h)
        for i, (s, h) in enumerate(zip(judge_scores, human_pass, strict=False))
    ]
    report = agreement_report(rows, threshold=0.5)
    assert report.meaningful and report.n_labelled == MIN_MEANINGFUL == 10
    assert report.confusion == Confusion(4, 2, 1, 3)
    assert report.agreement_rate == pytest.approx(0.7)
    assert report.kappa.value == pytest.approx(0.4)
    assert report.n_scores == 0 and report.mae is None
    assert report.spearman.value is None and report.pearson.value is None
    assert not any("not meaningful" in n for n in report.notes)
    assert any(n.startswith("Spearman:") for n in report.notes)


def test_report_with_fewer_than_ten_rows_says_so_and_uses_human_scores():
    rows = [
        AgreementRow(0, "a", 0.9, human_score=1.0),
        AgreementRow(1, "b", 0.2, human_score=0.0),
        AgreementRow(2, "c", 0.6, human_score=0.4),
    ]
    report = agreement_report(rows, threshold=0.5)
    assert not report.meaningful
    assert report.notes[0] == "Only 3 labelled row(s): with fewer than 10 the numbers are not meaningful yet."
    # Verdicts from the scores: judge T F T, human T F F → p_o = 2/3; judge passes 2/3, people 1/3;
    # p_e = 2/3·1/3 + 1/3·2/3 = 4/9; κ = (2/3 − 4/9)/(5/9) = (2/9)/(5/9) = 0.4
    assert report.agreement_rate == pytest.approx(2 / 3)
    assert report.kappa.value == pytest.approx(0.4)
    # MAE = (0.1 + 0.2 + 0.2) / 3
    assert report.mae == pytest.approx(0.5 / 3)
    assert report.pearson.value == pytest.approx(stats.pearsonr([0.9, 0.2, 0.6], [1.0, 0.0, 0.4]).statistic)


def test_report_never_crashes_on_degenerate_data():
    same = [AgreementRow(i, str(i), 1.0, human_score=1.0) for i in range(12)]
    report = agreement_report(same, threshold=0.5)
    assert report.kappa.value is None and report.spearman.value is None and report.pearson.value is None
    assert report.agreement_rate == 1.0 and report.mae == 0.0
    assert any("Cohen's kappa" in n and "undefined" in n for n in report.notes)
    nothing = agreement_report([], threshold=0.5)
    assert nothing.n_labelled == 0 and nothing.agreement_rate is None and nothing.confusion.n == 0


def test_agreement_rows_keep_scored_labelled_rows_only(tmp_path: Path):
    store = Store(tmp_path / "a.db")
    items = [
        EvalItem(f"r{n}", {"input": "q", "output": {"text": out}, "ground_truth": "abc"})
        for n, out in enumerate(["abc", "abx", "xyz"])
    ]
    result = run_evals(items, [create_scorer("textual-difference")], store=store)
    save_label(store, result.run_id, 0, "textual-difference", reviewer="ann", human_pass=True)
    save_label(store, result.run_id, 2, "textual-difference", reviewer="ann", human_score=0.25)
    rows = agreement_rows(result, current_labels(store, result.run_id), "textual-difference")
    assert [(r.item_index, r.judge_score, r.human_score, r.human_pass) for r in rows] == [
        (0, 1.0, None, True),
        (2, 0.0, 0.25, None),
    ]
    assert agreement_rows(result, current_labels(store, result.run_id), "other") == []
    store.close()


# ---- consistency


def test_consistency_report_by_hand():
    report = consistency_report(
        {3: [0.4, 0.6, 0.8], 1: [1.0, 1.0, "api_error"], 5: ["rate_limited"]},
        threshold=0.5,
        item_ids={1: "one", 3: "three", 5: "five"},
        stored_scores={1: 1.0, 3: 0.7},
    )
    first, second, third = report.rows
    assert [r.item_index for r in report.rows] == [1, 3, 5]
    assert first.scores == (1.0, 1.0) and first.n_failed == 1 and first.failures == ("api_error",)
    assert first.std == 0.0 and not first.flips and first.stored_score == 1.0
    # 0.4, 0.6, 0.8: mean 0.6, sample std = √((0.04 + 0 + 0.04)/2) = 0.2; 0.4 fails, the others pass.
    assert second.mean == pytest.approx(0.6) and second.std == pytest.approx(0.2)
    assert (second.min, second.max, second.spread) == (0.4, 0.8, pytest.approx(0.4))
    assert second.flips and second.item_id == "three"
    assert third.scores == () and third.mean is None and third.std is None and not third.flips
    # Rows with ≥ 2 scored repetitions: "one" (no flip) and "three" (flips) → 1/2.
    assert report.n_compared == 2 and report.flip_share == pytest.approx(0.5)
    assert report.mean_std == pytest.approx(0.1)
    assert report.repeats == 3
    assert consistency_report({}, threshold=0.5).flip_share is None


def test_sample_indexes_is_reproducible():
    pool = list(range(50))
    assert sample_indexes(pool, 5, seed=7) == sample_indexes(pool, 5, seed=7)
    assert len(set(sample_indexes(pool, 5, seed=7))) == 5
    assert sample_indexes([4, 2], 10) == [2, 4]


def gluten_reply(free: bool) -> Reply:
    return Reply.json({"isGlutenFree": free, "glutenSources": [] if free else ["wheat flour"]})


def test_rejudge_bypasses_the_cache_sends_the_temperature_and_stores_nothing(fake_openai: FakeOpenAI, tmp_path):
    store = Store(tmp_path / "c.db")
    items = [EvalItem(f"dish{n}", {"input": "A recipe", "output": f"Recipe {n} with rice"}) for n in range(3)]
    fake_openai.responder = lambda body: gluten_reply(True)
    cached = create_scorer("gluten-checker", settings=settings_for(fake_openai), cache=store)
    stored = run_evals(items, [cached], store=store)
    assert fake_openai.chat_call_count == 3
    before = store.results(stored.run_id)

    # Alternate verdicts per call: each row is asked 4 times; the same prompt 4 times must reach the judge.
    lock = threading.Lock()
    answers = itertools.cycle([True, False])

    def alternate(body):
        with lock:
            return gluten_reply(next(answers))

    fake_openai.reset()
    fake_openai.responder = alternate
    fresh = create_scorer("gluten-checker", settings=settings_for(fake_openai, temperature=0.9, seed=None), cache=None)
    progress: list[tuple[int, int]] = []
    reps = rejudge(fresh, items, [0, 2], repeats=4, concurrency=2, on_progress=lambda d, t: progress.append((d, t)))
    assert fake_openai.chat_call_count == 8
    assert all(r["temperature"] == 0.9 and "seed" not in r for r in fake_openai.chat_requests())
    assert sorted(reps) == [0, 2] and all(len(v) == 4 for v in reps.values())
    assert sorted(s for v in reps.values() for s in v) == [0.0] * 4 + [1.0] * 4
    assert sorted(progress)[-1] == (8, 8)
    assert store.results(stored.run_id) == before  # the run's results are untouched
    report = consistency_report(reps, threshold=0.5)
    assert report.n_compared == 2
    with pytest.raises(ValueError):
        rejudge(fresh, items, [0], repeats=0)
    store.close()


def test_rejudge_records_failures_as_statuses(fake_openai: FakeOpenAI):
    fake_openai.enqueue(gluten_reply(True), Reply.error(400, "bad request"))
    scorer = create_scorer("gluten-checker", settings=settings_for(fake_openai, max_retries=0), cache=None)
    reps = rejudge(scorer, [EvalItem("x", {"input": "q", "output": "rice"})], [0], repeats=2, concurrency=1)
    assert sorted(reps[0], key=str) == [1.0, "api_error"]


# ---- charts


def test_chart_builders():
    heat = confusion_heatmap(Confusion(4, 2, 1, 3))
    assert [list(row) for row in heat.data[0].z] == [[4, 2], [1, 3]]
    assert heat.data[0].text[0][0] == "4<br>40%"
    assert figure_messages(confusion_heatmap(Confusion())) == ["No labelled row has a verdict yet."]

    bins = calibration_bins([0.1, 0.9, 0.95], [False, True, False], n_bins=2)
    cal = calibration_chart(bins, scale=1.0, threshold=0.5)
    points = cal.data[1]
    assert list(points.x) == [0.25, 0.75] and list(points.y) == [0.0, 0.5]
    assert list(points.text) == ["n=1", "n=2"]
    assert points.cliponaxis is False  # a count above a 100% point is not cut off
    # The threshold is a dotted line named in the legend, not a label inside the plot over the counts.
    assert [(t.name, list(t.x)) for t in cal.data[2:]] == [("threshold 0.5", [0.5, 0.5])]
    assert not cal.layout.annotations
    assert figure_messages(calibration_chart(calibration_bins([], []))) == ["No labelled row has a verdict yet."]

    report = consistency_report({0: [0.4, 0.6], 1: [1.0, 1.0]}, threshold=0.5, stored_scores={0: 0.5})
    chart = consistency_chart(report.rows, threshold=0.5)
    bars = chart.data[0]
    assert list(bars.base) == [0.4, 1.0] and list(bars.x) == pytest.approx([0.2, 0.0])
    assert list(chart.data[1].x) == [0.4, 0.6, 1.0, 1.0]
    assert list(chart.data[2].x) == [0.5]
    assert figure_messages(consistency_chart(consistency_report({0: ["api_error"]}, threshold=0.5).rows, threshold=0.5))
