"""Grading counters that the database keeps: triggers, their recount, and a drift check.

Counting a set's grades per view took seconds at a million grades, so the counts live in columns
that triggers update in the transaction of the change, whatever code (or raw SQL) made it:
- `Candidate.grade_count`: the pair's grades; `Candidate.done`: settled, disputed, or holding the
  grades its set requires (`_DONE` below is that rule);
- `GradingSet.pair_count` and `done_count`: its pairs, and those done;
- `EditorProgress.graded`: the pairs of a set an editor has graded.
Counts move by increments, never by a recount inside the trigger: two editors grading one pair at
once then both count, whatever each transaction's snapshot saw. The columns are unsigned (a CHECK
constraint), so a count that would go below zero fails the change instead of drifting.

`install` is run by the migration grading_counters, and again after every migrate (apps.py), and
is the one definition of the triggers on both databases. A migration that alters one of these
tables on SQLite drops them first (`drop`): SQLite rebuilds the table and refuses to rename it
while a trigger names it (see 0017_dispute_grading_set). `recount` rebuilds every count from the
rows (after a bulk load with the triggers dropped); `drift` lists where a count disagrees with a
recount (the tests check it is empty).
"""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

# Whether the pair is done, on an `annotator_candidate` row being updated.
_DONE = """(
    EXISTS (SELECT 1 FROM annotator_finalgrade f WHERE f.candidate_id = annotator_candidate.id)
    OR EXISTS (SELECT 1 FROM annotator_dispute d WHERE d.candidate_id = annotator_candidate.id)
    OR annotator_candidate.grade_count >= (
        SELECT s.required_grades FROM annotator_gradingset s WHERE s.id = annotator_candidate.grading_set_id
    )
)"""


_CHANGED_PAIRS = "id IN (SELECT candidate_id FROM changed)"


def _refresh_done(where: str) -> str:
    return f"UPDATE annotator_candidate SET done = {_DONE} WHERE {where} AND done <> {_DONE};"


# SQLite: row triggers, (table, event, condition or "", statements). Updating one row many times
# in a transaction is cheap there.
_ROW_TRIGGERS: dict[str, tuple[str, str, str, str]] = {
    "annotator_grade_added": (
        "annotator_grade",
        "INSERT",
        "",
        f"""
        UPDATE annotator_candidate SET grade_count = grade_count + 1 WHERE id = NEW.candidate_id;
        {_refresh_done("id = NEW.candidate_id")}
        INSERT INTO annotator_editorprogress (grading_set_id, editor_id, graded)
            SELECT grading_set_id, NEW.editor_id, 1 FROM annotator_candidate WHERE id = NEW.candidate_id
            ON CONFLICT (grading_set_id, editor_id)
            DO UPDATE SET graded = annotator_editorprogress.graded + 1;
        """,
    ),
    "annotator_grade_removed": (
        "annotator_grade",
        "DELETE",
        "",
        f"""
        UPDATE annotator_candidate SET grade_count = grade_count - 1 WHERE id = OLD.candidate_id;
        {_refresh_done("id = OLD.candidate_id")}
        UPDATE annotator_editorprogress SET graded = graded - 1
            WHERE editor_id = OLD.editor_id
            AND grading_set_id = (SELECT grading_set_id FROM annotator_candidate WHERE id = OLD.candidate_id);
        """,
    ),
    "annotator_final_added": ("annotator_finalgrade", "INSERT", "", _refresh_done("id = NEW.candidate_id")),
    "annotator_final_removed": ("annotator_finalgrade", "DELETE", "", _refresh_done("id = OLD.candidate_id")),
    "annotator_dispute_added": ("annotator_dispute", "INSERT", "", _refresh_done("id = NEW.candidate_id")),
    "annotator_dispute_removed": ("annotator_dispute", "DELETE", "", _refresh_done("id = OLD.candidate_id")),
    "annotator_pair_added": (
        "annotator_candidate",
        "INSERT",
        "",
        """
        UPDATE annotator_gradingset SET pair_count = pair_count + 1,
            done_count = done_count + (CASE WHEN NEW.done THEN 1 ELSE 0 END)
            WHERE id = NEW.grading_set_id;
        """,
    ),
    "annotator_pair_removed": (
        "annotator_candidate",
        "DELETE",
        "",
        """
        UPDATE annotator_gradingset SET pair_count = pair_count - 1,
            done_count = done_count - (CASE WHEN OLD.done THEN 1 ELSE 0 END)
            WHERE id = OLD.grading_set_id;
        """,
    ),
    "annotator_pair_done": (
        "annotator_candidate",
        "UPDATE OF done",
        "OLD.done <> NEW.done",
        """
        UPDATE annotator_gradingset SET done_count = done_count + (CASE WHEN NEW.done THEN 1 ELSE -1 END)
            WHERE id = NEW.grading_set_id;
        """,
    ),
    "annotator_set_required": (
        "annotator_gradingset",
        "UPDATE OF required_grades",
        "OLD.required_grades <> NEW.required_grades",
        _refresh_done("grading_set_id = NEW.id"),
    ),
}

# PostgreSQL: statement triggers over the statement's changed rows (transition tables). A row
# updated many times in one transaction leaves a version per update there, each found through the
# ones before: 100,000 pairs pooled into one set would update its row 100,000 times, one per pair.
# (name, table, event, transition tables (or a row trigger's FOR EACH ROW clause), statements)
_PER_SET = "SELECT grading_set_id, COUNT(*) AS n, COUNT(*) FILTER (WHERE done) AS d FROM changed GROUP BY 1"
_GAINED = "CASE WHEN a.done THEN 1 ELSE 0 END - CASE WHEN b.done THEN 1 ELSE 0 END"
_STATEMENT_TRIGGERS: list[tuple[str, str, str, str, str]] = [
    (
        "annotator_grade_added",
        "annotator_grade",
        "INSERT",
        "NEW TABLE AS changed",
        f"""
        UPDATE annotator_candidate SET grade_count = grade_count + x.n
            FROM (SELECT candidate_id, COUNT(*) AS n FROM changed GROUP BY candidate_id) x
            WHERE annotator_candidate.id = x.candidate_id;
        {_refresh_done("id IN (SELECT candidate_id FROM changed)")}
        INSERT INTO annotator_editorprogress (grading_set_id, editor_id, graded)
            SELECT c.grading_set_id, g.editor_id, COUNT(*) FROM changed g
            JOIN annotator_candidate c ON c.id = g.candidate_id GROUP BY c.grading_set_id, g.editor_id
            ON CONFLICT (grading_set_id, editor_id)
            DO UPDATE SET graded = annotator_editorprogress.graded + EXCLUDED.graded;
        """,
    ),
    (
        "annotator_grade_removed",
        "annotator_grade",
        "DELETE",
        "OLD TABLE AS changed",
        f"""
        UPDATE annotator_candidate SET grade_count = grade_count - x.n
            FROM (SELECT candidate_id, COUNT(*) AS n FROM changed GROUP BY candidate_id) x
            WHERE annotator_candidate.id = x.candidate_id;
        {_refresh_done("id IN (SELECT candidate_id FROM changed)")}
        UPDATE annotator_editorprogress SET graded = graded - x.n
            FROM (
                SELECT c.grading_set_id, g.editor_id, COUNT(*) AS n FROM changed g
                JOIN annotator_candidate c ON c.id = g.candidate_id GROUP BY c.grading_set_id, g.editor_id
            ) x
            WHERE annotator_editorprogress.grading_set_id = x.grading_set_id
            AND annotator_editorprogress.editor_id = x.editor_id;
        """,
    ),
    *[
        (f"annotator_{name}_{verb}", table, event, f"{side} TABLE AS changed", _refresh_done(_CHANGED_PAIRS))
        for name, table in (("final", "annotator_finalgrade"), ("dispute", "annotator_dispute"))
        for verb, event, side in (("added", "INSERT", "NEW"), ("removed", "DELETE", "OLD"))
    ],
    (
        "annotator_pair_added",
        "annotator_candidate",
        "INSERT",
        "NEW TABLE AS changed",
        f"""
        UPDATE annotator_gradingset SET pair_count = pair_count + x.n, done_count = done_count + x.d
            FROM ({_PER_SET}) x
            WHERE annotator_gradingset.id = x.grading_set_id;
        """,
    ),
    (
        "annotator_pair_removed",
        "annotator_candidate",
        "DELETE",
        "OLD TABLE AS changed",
        f"""
        UPDATE annotator_gradingset SET pair_count = pair_count - x.n, done_count = done_count - x.d
            FROM ({_PER_SET}) x
            WHERE annotator_gradingset.id = x.grading_set_id;
        """,
    ),
    (
        "annotator_pair_done",
        "annotator_candidate",
        "UPDATE",
        "OLD TABLE AS before NEW TABLE AS after",
        f"""
        UPDATE annotator_gradingset SET done_count = done_count + x.d
            FROM (
                SELECT a.grading_set_id, SUM({_GAINED}) AS d
                FROM after a JOIN before b ON b.id = a.id WHERE a.done <> b.done GROUP BY a.grading_set_id
            ) x
            WHERE annotator_gradingset.id = x.grading_set_id;
        """,
    ),
    # A row trigger on the column alone: a statement trigger here would fire again on the
    # counters' own updates of the set.
    (
        "annotator_set_required",
        "annotator_gradingset",
        "UPDATE OF required_grades",
        "FOR EACH ROW WHEN (OLD.required_grades <> NEW.required_grades)",
        _refresh_done("grading_set_id = NEW.id"),
    ),
]


def install(connection: BaseDatabaseWrapper) -> None:
    """Create (or replace) every counter trigger."""
    drop(connection)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for name, table, event, transition, body in _STATEMENT_TRIGGERS:
                cursor.execute(
                    f"CREATE FUNCTION {name}() RETURNS trigger AS $$ BEGIN {body} RETURN NULL; END; $$ "
                    "LANGUAGE plpgsql"
                )
                each = (
                    transition
                    if transition.startswith("FOR EACH")
                    else f"REFERENCING {transition} FOR EACH STATEMENT"
                )
                cursor.execute(
                    f"CREATE TRIGGER {name} AFTER {event} ON {table} {each} EXECUTE FUNCTION {name}()"
                )
            return
        for name, (table, event, condition, body) in _ROW_TRIGGERS.items():
            when = f"WHEN ({condition})" if condition else ""
            cursor.execute(
                f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW {when} BEGIN {body} END"
            )


def drop(connection: BaseDatabaseWrapper) -> None:
    with connection.cursor() as cursor:
        for name, (table, *_rest) in _ROW_TRIGGERS.items():
            if connection.vendor == "postgresql":
                cursor.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
                cursor.execute(f"DROP FUNCTION IF EXISTS {name}()")
            else:
                cursor.execute(f"DROP TRIGGER IF EXISTS {name}")


_RECOUNTED_PAIRS = "SELECT COUNT(*) FROM annotator_grade g WHERE g.candidate_id = annotator_candidate.id"
_IN_SET = "FROM annotator_candidate c WHERE c.grading_set_id = annotator_gradingset.id"
_RECOUNTED_SETS = (f"(SELECT COUNT(*) {_IN_SET})", f"(SELECT COUNT(*) {_IN_SET} AND c.done)")
_RECOUNTED_EDITORS = """
    SELECT c.grading_set_id, g.editor_id, COUNT(*) FROM annotator_grade g
    JOIN annotator_candidate c ON c.id = g.candidate_id GROUP BY c.grading_set_id, g.editor_id
"""


def recount(connection: BaseDatabaseWrapper) -> None:
    """Every counter rebuilt from the rows, with the triggers off meanwhile (their increments
    would only be overwritten, one set row update per pair)."""
    drop(connection)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE annotator_candidate SET grade_count = ({_RECOUNTED_PAIRS})")
        cursor.execute(f"UPDATE annotator_candidate SET done = {_DONE}")
        pairs, done = _RECOUNTED_SETS
        cursor.execute(f"UPDATE annotator_gradingset SET pair_count = {pairs}, done_count = {done}")
        cursor.execute("DELETE FROM annotator_editorprogress")
        cursor.execute(
            f"INSERT INTO annotator_editorprogress (grading_set_id, editor_id, graded) {_RECOUNTED_EDITORS}"
        )
    install(connection)


def drift(connection: BaseDatabaseWrapper) -> list[str]:
    """Each row whose stored count differs from a recount, as "pair (id, stored, recounted, ...)",
    "set (...)" or "editor (set, editor, stored, recounted)", and each dispute whose copied set is
    not its pair's ("dispute (id, stored, pair's)"); empty when all agree."""
    pairs, done = _RECOUNTED_SETS
    checks = {
        "pair": f"""SELECT id, grade_count, ({_RECOUNTED_PAIRS}), done, {_DONE} FROM annotator_candidate
            WHERE grade_count <> ({_RECOUNTED_PAIRS}) OR done <> {_DONE}""",
        "set": f"""SELECT id, pair_count, {pairs}, done_count, {done} FROM annotator_gradingset
            WHERE pair_count <> {pairs} OR done_count <> {done}""",
        "editor": f"""SELECT r.grading_set_id, r.editor_id, COALESCE(p.graded, 0), r.n
            FROM ({_RECOUNTED_EDITORS.replace("COUNT(*)", "COUNT(*) AS n")}) r
            LEFT JOIN annotator_editorprogress p
                ON p.grading_set_id = r.grading_set_id AND p.editor_id = r.editor_id
            WHERE COALESCE(p.graded, 0) <> r.n
            UNION ALL
            SELECT p.grading_set_id, p.editor_id, p.graded, 0 FROM annotator_editorprogress p
            WHERE p.graded <> 0 AND NOT EXISTS (
                SELECT 1 FROM annotator_grade g JOIN annotator_candidate c ON c.id = g.candidate_id
                WHERE c.grading_set_id = p.grading_set_id AND g.editor_id = p.editor_id
            )""",
        # Not a counter, a copy: Dispute.grading_set must be its pair's set.
        "dispute": """SELECT d.id, d.grading_set_id, c.grading_set_id FROM annotator_dispute d
            JOIN annotator_candidate c ON c.id = d.candidate_id WHERE d.grading_set_id <> c.grading_set_id""",
    }
    found: list[str] = []
    with connection.cursor() as cursor:
        for what, sql in checks.items():
            cursor.execute(sql)
            found += [f"{what} {row}" for row in cursor.fetchall()]
    return found
