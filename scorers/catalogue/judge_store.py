"""Saved judges: versioned :class:`~scorers.catalogue.judge_builder.JudgeDefinition` rows in the Store's database.

A judge is stored under the slug of its name (``"Gluten checker (strict)"`` →
``gluten-checker-strict``). Saving a changed definition adds version n+1; older versions
are kept and never change, so a scorer id names one definition for good:

- ``judge:<slug>``: the latest version (what the catalogue lists);
- ``judge:<slug>@v<n>``: version n. A scorer built from either id has the versioned id,
  so a run records the version it used and can be rebuilt from it.

Deleting a judge hides it from the lists; its versions stay, so stored runs that used
it can still be resumed or re-scored. Saving the same name again continues its numbering.

Export and import use JSON: ``{"format": "scorer-studio-judges", "judges": [definition, ...]}``
(import also takes one definition object or a list of them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scorers.catalogue.judge_builder import JudgeDefinition, parse_definition, slugify, validate_definition
from scorers.core.errors import InvalidInputError
from scorers.runs.store import Store, now_iso

JUDGE_PREFIX = "judge:"
EXPORT_FORMAT = "scorer-studio-judges"
_SCORER_ID = re.compile(r"judge:([a-z0-9]+(?:-[a-z0-9]+)*)(?:@v([1-9][0-9]*))?")


@dataclass(frozen=True)
class SavedJudge:
    """One stored version of a judge.

    Attributes:
        slug: the judge's identity (from its name).
        version: 1, 2, ... in the order saved.
        definition: the definition of this version.
        created_at: when this version was saved (UTC, ISO 8601).
        latest_version: the judge's newest version when this was read.
        deleted: True when the judge was deleted (its versions are still readable).
    """

    slug: str
    version: int
    definition: JudgeDefinition
    created_at: str
    latest_version: int
    deleted: bool = False

    @property
    def name(self) -> str:
        """The display name of this version."""
        return self.definition.name

    @property
    def scorer_id(self) -> str:
        """``judge:<slug>``: the id of the judge's latest version."""
        return f"{JUDGE_PREFIX}{self.slug}"

    @property
    def versioned_id(self) -> str:
        """``judge:<slug>@v<n>``: the id of exactly this version."""
        return f"{JUDGE_PREFIX}{self.slug}@v{self.version}"


def parse_scorer_id(scorer_id: str) -> tuple[str, int | None] | None:
    """``(slug, version or None)`` of a saved judge's scorer id, or None when it is not one.

    >>> parse_scorer_id("judge:gluten-strict@v2")
    ('gluten-strict', 2)
    >>> parse_scorer_id("judge:gluten-strict")
    ('gluten-strict', None)
    >>> parse_scorer_id("gluten-checker") is None
    True
    """
    match = _SCORER_ID.fullmatch(scorer_id)
    if match is None:
        return None
    return match.group(1), int(match.group(2)) if match.group(2) else None


def _row(row: Any, latest: int, deleted: bool) -> SavedJudge:
    return SavedJudge(
        row["slug"],
        row["version"],
        JudgeDefinition.model_validate_json(row["definition"]),
        row["created_at"],
        latest,
        deleted,
    )


def save_judge(store: Store, definition: JudgeDefinition | Mapping[str, Any]) -> SavedJudge:
    """Save a definition as the next version of the judge with its name's slug.

    A definition equal to the judge's latest version is not saved again: that version
    is returned. A deleted judge saved again comes back with its numbering continued.

    Returns:
        The saved (or unchanged latest) version.

    Raises:
        InvalidInputError: the definition has problems (all listed).
    """
    d = parse_definition(definition)
    slug = slugify(d.name)
    text = d.model_dump_json()
    with store.transaction() as db:
        judge = db.execute("SELECT deleted_at FROM judges WHERE slug = ?", (slug,)).fetchone()
        latest = db.execute(
            "SELECT * FROM judge_versions WHERE slug = ? ORDER BY version DESC LIMIT 1", (slug,)
        ).fetchone()
        if judge is None:
            db.execute("INSERT INTO judges VALUES (?, ?, NULL)", (slug, now_iso()))
        elif judge["deleted_at"] is not None:
            db.execute("UPDATE judges SET deleted_at = NULL WHERE slug = ?", (slug,))
        if latest is not None and JudgeDefinition.model_validate_json(latest["definition"]) == d:
            return _row(latest, latest["version"], False)
        version = latest["version"] + 1 if latest is not None else 1
        created = now_iso()
        db.execute("INSERT INTO judge_versions VALUES (?, ?, ?, ?, ?)", (slug, version, d.name, text, created))
    return SavedJudge(slug, version, d, created, version)


def list_judges(store: Store) -> list[SavedJudge]:
    """The latest version of every judge that is not deleted, by name."""
    rows = store.query(
        "SELECT v.* FROM judge_versions v JOIN judges j ON j.slug = v.slug"
        " WHERE j.deleted_at IS NULL AND v.version = (SELECT MAX(version) FROM judge_versions WHERE slug = v.slug)"
    )
    return sorted((_row(r, r["version"], False) for r in rows), key=lambda j: (j.name.lower(), j.slug))


def _slug_of(name_or_slug: str) -> str:
    parsed = parse_scorer_id(name_or_slug)
    return parsed[0] if parsed is not None else slugify(name_or_slug)


def judge_versions(store: Store, name_or_slug: str) -> list[SavedJudge]:
    """Every version of a judge, oldest first (deleted judges included).

    Args:
        name_or_slug: its name, slug or scorer id.

    Raises:
        KeyError: no judge was ever saved under that slug.
    """
    slug = _slug_of(name_or_slug)
    judge = store.query("SELECT deleted_at FROM judges WHERE slug = ?", (slug,))
    rows = store.query("SELECT * FROM judge_versions WHERE slug = ? ORDER BY version", (slug,))
    if not judge or not rows:
        raise KeyError(f"no saved judge {name_or_slug!r}")
    deleted = judge[0]["deleted_at"] is not None
    return [_row(r, rows[-1]["version"], deleted) for r in rows]


def get_judge(store: Store, name_or_slug: str, version: int | None = None) -> SavedJudge:
    """A judge's latest version, or version ``version``.

    Args:
        name_or_slug: its name, slug or scorer id (``judge:<slug>`` or ``judge:<slug>@v<n>``;
            the id's version is used when ``version`` is None).
        version: 1, 2, ...; None for the latest (or the id's).

    Raises:
        KeyError: no such judge, the judge was deleted (asking for its latest version), or no
            such version. A deleted judge's versions can still be read by number.
    """
    parsed = parse_scorer_id(name_or_slug)
    if version is None and parsed is not None:
        version = parsed[1]
    versions = judge_versions(store, name_or_slug)
    if version is None:
        if versions[-1].deleted:
            raise KeyError(f"the judge {versions[-1].name!r} was deleted")
        return versions[-1]
    for saved in versions:
        if saved.version == version:
            return saved
    raise KeyError(f"the judge {versions[-1].name!r} has no version {version} (it has 1..{versions[-1].version})")


def get_judge_version(store: Store, name_or_slug: str, version: int) -> SavedJudge:
    """Version ``version`` of a judge (also of a deleted one). Raises KeyError when there is none."""
    return get_judge(store, name_or_slug, version)


def delete_judge(store: Store, name_or_slug: str) -> None:
    """Hide a judge from the lists; its versions stay readable for the runs that used them.

    Raises:
        KeyError: no such judge, or it is already deleted.
    """
    slug = _slug_of(name_or_slug)
    with store.transaction() as db:
        if (
            db.execute(
                "UPDATE judges SET deleted_at = ? WHERE slug = ? AND deleted_at IS NULL", (now_iso(), slug)
            ).rowcount
            == 0
        ):
            raise KeyError(f"no saved judge {name_or_slug!r}")


def export_judges(judges: Iterable[SavedJudge | JudgeDefinition]) -> str:
    """Judges as JSON text to download and import elsewhere: ``{"format", "judges": [definition, ...]}``.

    Args:
        judges: saved judges (their definitions are exported) or definitions.
    """
    definitions = [j.definition if isinstance(j, SavedJudge) else j for j in judges]
    return json.dumps(
        {"format": EXPORT_FORMAT, "judges": [d.model_dump(mode="json") for d in definitions]},
        indent=2,
        ensure_ascii=False,
    )


def read_export(text: str | bytes) -> list[JudgeDefinition]:
    """The definitions in an export (or in one definition object, or a list of them), all validated.

    Raises:
        InvalidInputError: not JSON, an unknown shape, or any definition with problems (each problem
            prefixed with its place, e.g. ``judges[1].output_fields[0].name: ...``). Nothing is
            returned unless every definition is valid.
    """
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"not JSON ({exc})", field="import") from None
    if isinstance(data, Mapping) and "judges" in data:
        if data.get("format", EXPORT_FORMAT) != EXPORT_FORMAT:
            raise InvalidInputError(
                f"unknown format {data.get('format')!r}; expected {EXPORT_FORMAT!r}", field="import.format"
            )
        entries, prefix = data["judges"], "judges"
    elif isinstance(data, list):
        entries, prefix = data, ""
    elif isinstance(data, Mapping):
        entries, prefix = [data], None
    else:
        raise InvalidInputError("expected a judge definition, a list of them, or an export file", field="import")
    if not isinstance(entries, list) or not entries:
        raise InvalidInputError("no judge definitions found", field="import")
    problems: list[str] = []
    for i, entry in enumerate(entries):
        where = f"{prefix}[{i}]" if prefix is not None else ""
        if not isinstance(entry, Mapping):
            problems.append(f"{where or 'import'}: expected a judge definition object")
            continue
        problems += [f"{where}.{p}" if where else p for p in validate_definition(entry)]
    if problems:
        raise InvalidInputError("nothing was imported: " + "; ".join(problems))
    return [JudgeDefinition.model_validate(entry) for entry in entries]


def import_judges(store: Store, text: str | bytes) -> list[SavedJudge]:
    """Import judges from JSON (see :func:`read_export`); a judge whose name is taken gets a new version.

    Returns:
        The saved versions, in the file's order (an unchanged definition returns the existing version).

    Raises:
        InvalidInputError: see :func:`read_export`; nothing is saved then.
    """
    return [save_judge(store, d) for d in read_export(text)]
