"""The ``gate`` and ``baseline`` commands of ``python -m scorers`` (see :mod:`scorers.cli`).

``gate`` compares a candidate with a baseline (:mod:`scorers.analysis.gate`), prints the
Markdown summary, writes the CI outputs asked for, records the verdict in the store and
exits 0 (pass), 1 (regression), 2 (usage or input error) or 3 (too many items not scored
to decide). ``baseline`` keeps named baselines with their history in the store; a baseline
moves only by ``baseline set``, and never to a run that failed a gate.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from scorers.analysis.gate_defaults import DEFAULT_MAX_UNSCORED_SHARE, DEFAULT_TOP
from scorers.cli import EXIT_OK, CLIError, _Console, _open_store, _table, _threshold, number_type
from scorers.core.errors import InvalidInputError
from scorers.runs.store import default_db

DB_HELP = "the SQLite store (default $SCORER_STUDIO_DB or the user data directory)"

GATE_EPILOG = """\
BASELINE and CANDIDATE are each a stored run id, a named baseline (python -m scorers
baseline list) or a results file exported as .jsonl or .parquet; prefix with run:,
baseline: or file: when a name could be several. Items are paired by item id.

A scorer scored with other options on the two sides (scale, evaluation mode, textual
difference's target, ...) is not gated: its scores do not measure the same thing. A
results file records its scorers' options; one exported before exports carried them is
refused unless --assume-same-options says they match the other side's.

A scorer fails when its mean change (candidate - baseline, in the scorer's direction:
lower is better for toxicity, bias, hallucination) is worse than its minimum effect AND
the bootstrap interval excludes zero, or when the candidate's mean misses its --floor
(a ceiling for lower-is-better scorers). Items not scored are never counted as 0: they
are left out of the pairs, and a scorer with more than --max-unscored of the baseline's
items not scored (on either side, or missing from the candidate) is undecided.

exit codes:
  0  pass: no scorer regressed
  1  a scorer regressed (or missed its floor)
  2  usage or input error (bad flags, unknown run or baseline, unreadable file)
  3  undecided: too many items not scored to decide (and no scorer regressed)

examples:
  python -m scorers gate --baseline main --candidate 3f2a9c0d1e4b --min-effect 0.02
  python -m scorers gate --baseline baseline.jsonl --candidate results.jsonl \\
      --min-effect prompt-alignment=0.05 --floor toxicity=0.2 \\
      --markdown summary.md --junit gate.xml --json verdict.json --report gate.html
"""


_share = number_type(lambda value: 0 <= value <= 1, "a share between 0 and 1 such as 0.1")
_confidence = number_type(lambda value: 0 < value < 1, "a confidence level strictly between 0 and 1 such as 0.95")
_number = number_type(lambda value: True, "SCORER=X or a finite number")


def _min_effect(text: str) -> tuple[str | None, float]:
    """``SCORER=X`` or a bare ``X`` (every scorer); X >= 0 on the scorer's scale."""
    if "=" in text:
        name, value = _threshold(text)
    else:
        name, value = None, _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"a minimum effect is a size, >= 0 (the direction comes from the scorer), got {value:g}"
        )
    return name, value


def add_parsers(commands: Any) -> None:
    """Add the ``gate`` and ``baseline`` subcommands to the ``python -m scorers`` parser."""
    gate = commands.add_parser(
        "gate",
        help="fail CI when a candidate run regressed against a baseline",
        description="Compare a candidate run with a baseline, scorer by scorer, paired by item id:\n"
        "mean change with a bootstrap interval, win/tie/loss, the Wilcoxon signed-rank\n"
        "test and the items that regressed most. Prints a Markdown summary.",
        epilog=GATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gate.add_argument("--baseline", required=True, metavar="BASELINE", help="run id, named baseline or results file")
    gate.add_argument("--candidate", required=True, metavar="CANDIDATE", help="run id, named baseline or results file")
    rule = gate.add_argument_group("rule")
    rule.add_argument(
        "--min-effect",
        action="append",
        type=_min_effect,
        default=[],
        metavar="[SCORER=]X",
        help="the smallest worsening that fails, on the scorer's scale (default 0: any regression the "
        "interval shows); a bare X applies to every scorer; repeatable",
    )
    rule.add_argument(
        "--floor",
        action="append",
        type=_threshold,
        default=[],
        metavar="SCORER=X",
        help="also fail when the candidate's mean is below X (above X for lower-is-better scorers); repeatable",
    )
    rule.add_argument(
        "--max-unscored",
        type=_share,
        default=DEFAULT_MAX_UNSCORED_SHARE,
        metavar="SHARE",
        help=f"largest share of the baseline's items not scored (or missing from the candidate) before a "
        f"scorer is undecided, exit 3 "
        f"(default {DEFAULT_MAX_UNSCORED_SHARE})",
    )
    rule.add_argument(
        "--confidence", type=_confidence, default=0.95, metavar="LEVEL", help="the interval's level (default 0.95)"
    )
    rule.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    rule.add_argument(
        "--assume-same-options",
        action="store_true",
        help="gate a results file that does not record its scorers' options (exported before exports "
        "carried them) as if they were the other side's; without it such a file is refused",
    )
    outputs = gate.add_argument_group("outputs")
    outputs.add_argument("--markdown", metavar="FILE", help="write the Markdown summary (e.g. $GITHUB_STEP_SUMMARY)")
    outputs.add_argument("--junit", metavar="FILE", help="write JUnit XML: one test case per scorer")
    outputs.add_argument("--junit-items", action="store_true", help="with --junit: also one test case per item")
    outputs.add_argument("--json", metavar="FILE", help="write the verdict as JSON")
    outputs.add_argument("--report", metavar="FILE", help="write a self-contained HTML report of the gate")
    outputs.add_argument(
        "--report-url",
        metavar="URL",
        help="where the HTML report will be published; the Markdown links to its sections (default the --report path)",
    )
    outputs.add_argument(
        "--top", type=int, default=DEFAULT_TOP, metavar="N", help=f"regressed items listed per scorer ({DEFAULT_TOP})"
    )
    gate.add_argument("--db", metavar="PATH", help=DB_HELP)

    baseline = commands.add_parser(
        "baseline",
        help="named baselines: set, show, list",
        description="Named baselines kept in the store with their history. A baseline moves only\n"
        "with `baseline set`, and never to a run that failed a gate or did not complete.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = baseline.add_subparsers(dest="baseline_command", required=True, metavar="{set,show,list}")
    set_ = actions.add_parser("set", help="point NAME at RUN (kept in its history)")
    set_.add_argument("name", metavar="NAME")
    set_.add_argument("run_id", metavar="RUN")
    set_.add_argument("--note", default="", help="why it moved (kept in the history)")
    set_.add_argument("--db", metavar="PATH", help=DB_HELP)
    show = actions.add_parser("show", help="NAME's current run and its history")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--db", metavar="PATH", help=DB_HELP)
    list_ = actions.add_parser("list", help="every named baseline")
    list_.add_argument("--db", metavar="PATH", help=DB_HELP)


def _write(path: str, data: bytes | str, what: str) -> None:
    try:
        target = Path(path).expanduser()
        if isinstance(data, str):
            target.write_text(data, encoding="utf-8")
        else:
            target.write_bytes(data)
    except OSError as exc:
        raise CLIError(f"{path}: cannot write the {what} ({exc.strerror or exc})") from None


def cmd_gate(args: argparse.Namespace, console: _Console) -> int:
    """``python -m scorers gate``: see :data:`GATE_EPILOG`."""
    from scorers.analysis.gate import (  # pandas: only for this command
        GatePolicy,
        evaluate_gate,
        gate_report,
        junit_report,
        markdown_summary,
        resolve_side,
    )

    if args.junit_items and not args.junit:
        raise CLIError("--junit-items applies with --junit FILE only")
    if args.top < 0:
        raise CLIError(f"--top must be >= 0, got {args.top}")
    defaults = [v for name, v in args.min_effect if name is None]
    if len(defaults) > 1:
        raise CLIError("give at most one --min-effect without a scorer (it applies to every scorer)")
    try:
        policy = GatePolicy(
            min_effect={name: v for name, v in args.min_effect if name is not None},
            default_min_effect=defaults[0] if defaults else 0.0,
            floors=dict(args.floor),
            max_unscored_share=args.max_unscored,
            confidence=args.confidence,
            seed=args.seed,
            top=args.top,
            assume_same_options=args.assume_same_options,
        )
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    target = args.db or default_db()
    store = _open_store(args.db, must_exist=True) if "://" in target or Path(target).expanduser().exists() else None
    try:
        try:
            baseline = resolve_side(args.baseline, store)
            candidate = resolve_side(args.candidate, store)
            result = evaluate_gate(baseline, candidate, policy)
        except (InvalidInputError, ValueError) as exc:
            raise CLIError(str(exc)) from None
        report_url = args.report_url or (args.report if args.report else None)
        summary = markdown_summary(result, report_url=report_url)
        console.print(summary)
        if store is not None:
            store.record_gate_verdict(
                candidate=args.candidate,
                candidate_run_id=candidate.run_id,
                baseline=args.baseline,
                baseline_run_id=baseline.run_id,
                verdict=result.verdict.value,
                details=result.to_dict(),
            )
        else:
            console.note(f"Note: the verdict is not recorded: there is no store at {target}.")
    finally:
        if store is not None:
            store.close()
    if args.markdown:
        _write(args.markdown, summary, "Markdown summary")
    if args.junit:
        _write(args.junit, junit_report(result, per_item=args.junit_items), "JUnit XML")
    if args.json:
        _write(args.json, result.to_json() + "\n", "JSON verdict")
    if args.report:
        _write(args.report, gate_report(result), "HTML report")
    return result.exit_code


def cmd_baseline(args: argparse.Namespace, console: _Console) -> int:
    """``python -m scorers baseline set|show|list``."""
    store = _open_store(args.db, must_exist=args.baseline_command != "set")
    try:
        if args.baseline_command == "set":
            try:
                entry = store.set_baseline(args.name, args.run_id, note=args.note)
            except ValueError as exc:
                raise CLIError(str(exc)) from None
            console.print(f"Baseline {entry['name']!r} is now run {entry['run_id']} (set {entry['set_at']}).")
            return EXIT_OK
        if args.baseline_command == "show":
            history = store.baseline_history(args.name)
            if not history:
                raise CLIError(f"no baseline named {args.name!r}; `python -m scorers baseline list` lists them")
            console.print(f"Baseline {args.name!r}: run {history[0]['run_id']}{_run_name(store, history[0]['run_id'])}")
            console.print("History (newest first):")
            rows = [
                [h["set_at"][:16].replace("T", " "), h["run_id"], _run_name(store, h["run_id"]).strip(), h["note"]]
                for h in history
            ]
            for line in _table(["set (UTC)", "run", "name", "note"], rows, [False] * 4):
                console.print("  " + line)
            return EXIT_OK
        baselines = store.list_baselines()
        if not baselines:
            console.print(
                f"No baselines in {store.display_name}: set one with `python -m scorers baseline set NAME RUN`."
            )
            return EXIT_OK
        rows = [[b["name"], b["run_id"], b["set_at"][:16].replace("T", " "), str(b["n_changes"])] for b in baselines]
        for line in _table(["name", "run", "set (UTC)", "changes"], rows, [False, False, False, True]):
            console.print(line)
        return EXIT_OK
    finally:
        store.close()


def _run_name(store: Any, run_id: str) -> str:
    try:
        return f" ({store.get_run(run_id)['name']})"
    except KeyError:
        return " (run deleted)"


__all__ = ["add_parsers", "cmd_baseline", "cmd_gate"]
