"""JUnit XML reports, so CI systems (GitHub Actions, GitLab, Jenkins) show scorer results as tests.

The document follows the common JUnit report format that Jenkins, GitLab and the GitHub
test-report actions read: a
``<testsuites>`` element holding one ``<testsuite>`` with ``tests``, ``failures``,
``errors`` and ``skipped`` counts, ``<properties>``, then one ``<testcase>`` per test whose
outcome is nothing (passed), ``<failure>`` (a verdict on the scores), ``<error>`` (could
not be decided, e.g. items not scored) or ``<skipped>``, with details in ``<system-out>``.
It is written with the standard library's ElementTree, which escapes every text.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from scorers.core.base import decimal_text

if TYPE_CHECKING:
    from scorers.runs.runner import EvalRunResult

Outcome = Literal["passed", "failure", "error", "skipped"]

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _x(text: object) -> str:
    """Text XML 1.0 can carry: characters it forbids (NUL, other C0 controls, lone surrogates) become U+FFFD."""
    return _NOT_XML.sub("\ufffd", str(text))


@dataclass(frozen=True)
class JUnitCase:
    """One ``<testcase>``.

    Attributes:
        classname: the group it is shown under, e.g. ``"scorers.gate"``.
        name: the test's name, e.g. the scorer id or an item id.
        outcome: ``"passed"``, ``"failure"``, ``"error"`` or ``"skipped"``.
        message: one line for the failure, error or skip (its ``message`` attribute).
        kind: the ``type`` attribute of the failure, error or skip, e.g. ``"regression"``.
        details: longer text: the element's body for a failure or error, else ``<system-out>``.
    """

    classname: str
    name: str
    outcome: Outcome = "passed"
    message: str = ""
    kind: str = ""
    details: str = ""


@dataclass(frozen=True)
class JUnitSuite:
    """One ``<testsuite>``: a name, ``properties`` (name → value) and its cases."""

    name: str
    cases: Sequence[JUnitCase]
    properties: Mapping[str, str] = field(default_factory=dict)


def junit_xml(suite: JUnitSuite) -> bytes:
    """The suite as a JUnit XML document.

    Args:
        suite: the test suite.

    Returns:
        UTF-8 XML with a declaration: ``<testsuites>`` with the totals, then the suite.

    Raises:
        ValueError: a case with an unknown outcome.
    """
    counts = {"failure": 0, "error": 0, "skipped": 0, "passed": 0}
    for case in suite.cases:
        if case.outcome not in counts:
            raise ValueError(f"unknown JUnit outcome {case.outcome!r} of test {case.name!r}")
        counts[case.outcome] += 1
    totals = {
        "tests": str(len(suite.cases)),
        "failures": str(counts["failure"]),
        "errors": str(counts["error"]),
    }
    root = ET.Element("testsuites", {"name": _x(suite.name), **totals, "time": "0"})
    element = ET.SubElement(
        root,
        "testsuite",
        {
            "name": _x(suite.name),
            **totals,
            "skipped": str(counts["skipped"]),
            "time": "0",
            "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S"),
        },
    )
    if suite.properties:
        properties = ET.SubElement(element, "properties")
        for name, value in suite.properties.items():
            ET.SubElement(properties, "property", {"name": _x(name), "value": _x(value)})
    for case in suite.cases:
        node = ET.SubElement(element, "testcase", {"classname": _x(case.classname), "name": _x(case.name), "time": "0"})
        if case.outcome != "passed":
            outcome = ET.SubElement(
                node, case.outcome, {"message": _x(case.message), "type": _x(case.kind or case.outcome)}
            )
            if case.outcome != "skipped":
                outcome.text = _x(case.details or case.message)
        if case.details and case.outcome in ("passed", "skipped"):
            ET.SubElement(node, "system-out").text = _x(case.details)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def run_junit(result: EvalRunResult, failed_thresholds: Mapping[str, str], *, per_item: bool = False) -> bytes:
    """JUnit XML of a scored run (``python -m scorers run --junit``).

    One test case per scorer (classname ``scorers.run``): a ``<failure>`` when its threshold
    was not met (``failed_thresholds`` says why), else an ``<error>`` when some of its items
    were not scored (they are never counted as 0), else passed; the summary (mean over scored
    items, counts) is in the body or ``<system-out>``. With ``per_item``, one case per item ×
    scorer (classname ``scorers.run.<scorer>``): an ``<error>`` with the status and error
    when it was not scored, else passed with its score.

    Args:
        result: the run's result.
        failed_thresholds: scorer id → why its threshold failed (empty when all were met).
        per_item: add the per-item cases.
    """
    cases = []
    for sid, summary in result.scores().items():
        mean = "n/a" if summary.mean is None else decimal_text(summary.mean, 4)
        details = f"mean {mean} over {summary.n_scored} scored item(s); {summary.n_failed} not scored"
        if sid in failed_thresholds:
            cases.append(JUnitCase("scorers.run", sid, "failure", failed_thresholds[sid], "threshold", details))
        elif summary.n_failed:
            message = f"{summary.n_failed} item(s) not scored"
            cases.append(JUnitCase("scorers.run", sid, "error", message, "not_scored", details))
        else:
            cases.append(JUnitCase("scorers.run", sid, details=details))
    if per_item:
        for o in result.outcomes:
            name, classname = o.item_id, f"scorers.run.{o.scorer_id}"
            if o.score is None:
                error = f"not scored: {o.status.value}" + (f": {o.error}" if o.error else "")
                cases.append(JUnitCase(classname, name, "error", error, o.status.value, error))
            else:
                cases.append(JUnitCase(classname, name, details=f"score {o.score:g}"))
    return junit_xml(JUnitSuite(f"scorers run {result.run_id}", cases, {"run_id": str(result.run_id)}))


__all__ = ["JUnitCase", "JUnitSuite", "Outcome", "junit_xml", "run_junit"]
