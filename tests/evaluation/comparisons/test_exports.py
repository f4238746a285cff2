"""The export zip (pool + runs as uploaded + report in JSON, CSV and Markdown), the demo's two
comparisons, and outside oracles: `manage.py evaluate` on the exported files, and pytrec_eval."""

from __future__ import annotations

import csv
import io
import json
import random
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotator.demo.comparisons import COMPARISONS
from annotator.management.commands.demo import build_demo
from annotator.models import Project
from evaluation.exports import comparison_export
from evaluation.models import Comparison
from tests.conftest import Cast
from tests.evaluation.comparisons.helpers import E1_NDCG, E9_DCG, E9_IDCG, E9_NDCG, stored_column
from tests.factories import E9_POOL, make_comparison, make_e9, make_pool, make_run


def export(client: Client, comparison: Comparison) -> zipfile.ZipFile:
    response = client.get(
        reverse("comparison_export", kwargs={"slug": comparison.project.slug, "comparison_id": comparison.pk})
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert f"comparison-{comparison.pk}.zip" in response["Content-Disposition"]
    return zipfile.ZipFile(io.BytesIO(response.content))


def evaluate_exported(archive: zipfile.ZipFile, tmp_path: Path) -> dict[str, Any]:
    """Run `manage.py evaluate` exactly as the exported README says, on the extracted files."""
    archive.extractall(tmp_path)
    folder = next(tmp_path.iterdir())
    report = json.loads((folder / "report/report.json").read_text())
    command = report["reproduce"].split()
    assert command[:3] == ["python", "manage.py", "evaluate"]
    arguments = [str(folder / a) if i < 3 else a for i, a in enumerate(command[3:])]
    out = io.StringIO()
    call_command("evaluate", *arguments, stdout=out)
    return json.loads(out.getvalue())


def assert_same_numbers(report: dict[str, Any], evaluated: dict[str, Any]) -> None:
    """Every number of the exported report equals the evaluate command's, to the last digit."""
    assert evaluated["settings"] == report["settings"]
    assert evaluated["counts"] == report["counts"]
    for label in ("a", "b"):
        assert evaluated["systems"][label]["mean"] == report["systems"][label]["mean"]
        assert evaluated["systems"][label]["micro"] == report["systems"][label]["micro"]
    for key in ("mean_delta", "wins", "ties", "losses", "randomization_p", "t_test_p", "delta_ci95"):
        assert evaluated["comparison"][key] == report["comparison"][key], key
    assert evaluated["queries"] == report["queries"]


# ---- The demo -----------------------------------------------------------------------------------


@pytest.fixture
def demo(db: None, settings: Any) -> Project:
    settings.DEBUG = True
    return build_demo()


def demo_comparison(project: Project, pool_name: str) -> Comparison:
    name = next(spec[4] for spec in COMPARISONS if spec[0] == pool_name)
    return Comparison.objects.get(project=project, name=name)


def test_the_demo_adds_the_seeds_two_comparisons_once(demo: Project) -> None:
    build_demo()
    assert Comparison.objects.filter(project=demo).count() == 2
    phone = demo_comparison(demo, "Phone number change")
    seed = demo_comparison(demo, "Seed 000")
    assert (phone.k, seed.k) == (3, 2)
    assert stored_column(phone, "a") == [E9_NDCG] and stored_column(phone, "b") == [1.0]
    assert stored_column(phone, "a", "dcg") == [E9_DCG] and stored_column(phone, "a", "idcg") == [E9_IDCG]
    assert stored_column(seed, "a") == [E1_NDCG] and stored_column(seed, "b") == [1.0]


def test_the_demo_pages_show_the_contracts_numbers(demo: Project, client: Client) -> None:
    client.force_login(demo.memberships.get(user__username="reviewer").user)
    phone = demo_comparison(demo, "Phone number change")
    page = client.get(phone.get_absolute_url()).content.decode()
    assert f'title="{E9_NDCG!r}">0.6075<' in page and 'title="1.0">1.0000<' in page
    breakdown = client.get(
        reverse("comparison_query", kwargs={"slug": demo.slug, "comparison_id": phone.pk}) + "?query=q1"
    ).content.decode()
    for value in (E9_DCG, E9_IDCG, E9_NDCG):
        assert f'title="{value!r}"' in breakdown
    seed = demo_comparison(demo, "Seed 000")
    breakdown = client.get(
        reverse("comparison_query", kwargs={"slug": demo.slug, "comparison_id": seed.pk}) + "?query=q2"
    ).content.decode()
    assert f'title="{E1_NDCG!r}">0.6173<' in breakdown
    assert "If the ideal came only from this list's candidates:" in breakdown


@pytest.mark.parametrize("pool_name", ["Phone number change", "Seed 000"])
def test_the_demo_exports_reproduce_through_the_evaluate_command(
    demo: Project, client: Client, tmp_path: Path, pool_name: str
) -> None:
    client.force_login(demo.memberships.get(user__username="owner").user)
    comparison = demo_comparison(demo, pool_name)
    archive = export(client, comparison)
    folder = f"comparison-{comparison.pk}/"
    report = json.loads(archive.read(folder + "report/report.json"))
    expected = E9_NDCG if pool_name == "Phone number change" else E1_NDCG
    assert report["queries"][0]["a"]["ndcg"] == expected
    assert report["systems"]["b"]["mean"] == 1.0
    assert_same_numbers(report, evaluate_exported(archive, tmp_path))


# ---- The archive --------------------------------------------------------------------------------


def test_the_archive_holds_the_pool_both_runs_as_uploaded_and_the_report(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, {"q1": {"A": 3, "B": 2, "C": 1, "D": 0, "E": 0}}, by=cast.owner)
    trec = "q1 Q0 C 1 3.5 bm25\nq1 Q0 A 2 2.25 bm25\nq1 Q0 D 3 1 bm25\n"
    a = make_run(cast.alpha, "bm25", text=trec, fmt="trec", file_name="../bm25 run.txt", by=cast.reviewer)
    b = make_run(cast.alpha, "乙", {"q1": "ABCDE"}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=3)
    client.force_login(cast.reviewer)
    archive = export(client, comparison)
    folder = f"comparison-{comparison.pk}/"
    names = set(archive.namelist())
    assert {
        folder + n
        for n in (
            "README.md",
            "pool/manifest.json",
            "report/report.json",
            "report/queries.csv",
            "report/summary.csv",
            "runs/a.json",
            "runs/b.json",
        )
    } <= names
    assert archive.read(folder + "runs/a/bm25_run.txt") == trec.encode()
    assert archive.read(folder + "runs/b/pasted.txt") == b"q1: A, B, C, D, E\n"
    manifest = json.loads(archive.read(folder + "pool/manifest.json"))
    assert manifest["sha256"] == version.sha256
    qrels = archive.read(folder + manifest["data_file"]["name"].join(("pool/", ""))).decode()
    assert sorted(qrels.splitlines()) == sorted(
        f"q1 0 {d} {g}" for d, g in zip("ABCDE", (3, 2, 1, 0, 0), strict=True)
    )
    rows = list(csv.DictReader(io.StringIO(archive.read(folder + "report/queries.csv").decode())))
    assert [float(rows[0]["a_ndcg"]), float(rows[0]["b_ndcg"])] == [E9_NDCG, 1.0]
    assert rows[0]["a_ndcg"] == repr(E9_NDCG)  # full precision, not the displayed 0.6075
    summary = {
        (r["section"], r["name"]): r["value"]
        for r in csv.DictReader(io.StringIO(archive.read(folder + "report/summary.csv").decode()))
    }
    assert summary[("settings", "k")] == "3" and summary[("system", "a.mean")] == repr(E9_NDCG)
    readme = archive.read(folder + "README.md").decode()
    assert "0.6075" in readme and "APP/manage.py evaluate" in readme and version.sha256 in readme


def test_the_archives_readme_command_runs_as_written_from_the_extracted_folder(
    cast: Cast, client: Client, tmp_path: Path
) -> None:
    """manage.py is not in the archive, so the README says to run the checkout's manage.py with
    its Python, not `python manage.py evaluate ...` from inside the folder: run exactly that."""
    import shlex
    import subprocess
    import sys

    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    a = make_run(cast.alpha, "甲", {"q1": list("CADBE")}, by=cast.reviewer)
    b = make_run(cast.alpha, "乙", {"q1": list("ABCDE")}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=3)
    client.force_login(cast.reviewer)
    archive = export(client, comparison)
    archive.extractall(tmp_path)
    folder = next(tmp_path.iterdir())
    line = next(
        text for text in (folder / "README.md").read_text().splitlines() if text.startswith("    APP/")
    )
    root = Path(__file__).resolve().parents[3]
    # APP/.venv/bin/python is this checkout's interpreter: the one running the tests.
    argv = shlex.split(
        line.strip().replace("APP/.venv/bin/python", sys.executable).replace("APP/", f"{root}/")
    )
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads((folder / "report/report.json").read_text())
    assert_same_numbers(report, json.loads(done.stdout))


def test_exporting_twice_gives_the_same_bytes(cast: Cast) -> None:
    version = make_pool(cast.alpha, {"q1": {"A": 3, "B": 1}}, by=cast.owner)
    a = make_run(cast.alpha, "a", {"q1": "AB"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": "BA"}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    assert comparison_export(comparison=comparison) == comparison_export(comparison=comparison)


def test_an_export_with_lenient_policies_and_mixed_formats_reproduces_through_evaluate(
    cast: Cast, client: Client, tmp_path: Path
) -> None:
    """Scored TREC (with ties under trec_eval's rule) against pasted lists, unjudged IDs scored 0,
    a zero-IDCG query excluded, a missing query and an extra one: evaluate agrees on every digit."""
    rng = random.Random(3)
    pool = {f"t{i}": {f"d{j}": rng.randint(0, 3) for j in range(12)} for i in range(40)}
    pool["t0"] = {"d0": 0, "d1": 0}
    version = make_pool(cast.alpha, pool, by=cast.owner)
    lines = []
    for q in list(pool)[:-1]:  # the last pool query is missing from A
        candidates = [*pool[q], "u1", "u2"]
        for rank, doc in enumerate(rng.sample(candidates, min(10, len(candidates))), start=1):
            lines.append(f"{q} Q0 {doc} {rank} {rng.choice([1.0, 2.0, 2.5, 3.0])} sys\n")
    a = make_run(
        cast.alpha, "scored", text="".join(lines), fmt="trec", file_name="scored.run", by=cast.reviewer
    )
    lists = {q: rng.sample([*pool[q], "u3"], min(8, len(pool[q]) + 1)) for q in pool}
    lists["extra"] = ["d1"]
    # "t5:" with no IDs: no run file can state an empty ranking, so it counts as missing from B
    # in the app as in the exported copy.
    lists["t5"] = []
    b = make_run(cast.alpha, "lists", lists, by=cast.reviewer)
    comparison = make_comparison(
        cast.alpha,
        version,
        a,
        b,
        by=cast.reviewer,
        k=5,
        unjudged="zero",
        zero_idcg="exclude",
        ties="docid-desc",
        extra_queries="ignore",
        seed=42,
    )
    client.force_login(cast.reviewer)
    archive = export(client, comparison)
    report = json.loads(archive.read(f"comparison-{comparison.pk}/report/report.json"))
    assert report["counts"]["excluded"] == 1 and report["counts"]["missing_from_run"] == {"a": 1, "b": 1}
    assert report["counts"]["extra_queries_skipped"] == {"a": 0, "b": 1}
    assert report["counts"]["unjudged_in_top_k"]["a"] > 0
    assert_same_numbers(report, evaluate_exported(archive, tmp_path))


def test_stored_ndcg_agrees_with_pytrec_eval_under_trec_evals_rules(cast: Cast) -> None:
    """An outside oracle: trec_eval's ndcg_cut (unjudged = 0, ties by document ID descending)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(5)
    pool = {f"q{i}": {f"d{j}": rng.randint(0, 3) for j in range(15)} for i in range(30)}
    for q in pool:
        pool[q]["d0"] = 3  # every query has a positive IDCG (trec_eval has no zero-IDCG policy)
    scored = {q: {d: float(rng.randint(0, 4)) for d in rng.sample([*pool[q], "x1", "x2"], 12)} for q in pool}
    version = make_pool(cast.alpha, pool, by=cast.owner)
    text = "".join(f"{q} Q0 {d} 0 {s!r} s\n" for q, docs in scored.items() for d, s in docs.items())
    a = make_run(cast.alpha, "a", text=text, fmt="trec", by=cast.reviewer)
    b = make_run(cast.alpha, "b", {q: list(pool[q]) for q in pool}, by=cast.reviewer)
    comparison = make_comparison(
        cast.alpha, version, a, b, by=cast.reviewer, k=10, unjudged="zero", ties="docid-desc"
    )
    oracle = pytrec_eval.RelevanceEvaluator(pool, {"ndcg_cut.10"}).evaluate(scored)
    stored = dict(zip(comparison.results["query_ids"], stored_column(comparison, "a"), strict=True))
    for q in pool:
        assert stored[q] == pytest.approx(oracle[q]["ndcg_cut_10"], abs=1e-12), q


def test_the_archives_breakdown_csv_is_what_evaluate_breakdown_writes_from_its_files(
    cast: Cast, client: Client, tmp_path: Path
) -> None:
    from django.core.management import call_command

    comparison = make_e9(cast.alpha, owner=cast.owner, reviewer=cast.reviewer)
    client.force_login(cast.reviewer)
    export(client, comparison).extractall(tmp_path)
    folder = next(tmp_path.iterdir())
    written = (folder / "report/breakdown.csv").read_text()
    out = io.StringIO()
    files = [next((folder / "pool").glob("*.qrels")), folder / "runs/a.trec", folder / "runs/b.trec"]
    call_command("evaluate", *map(str, files), "--k", "3", "--breakdown", "--format", "csv", stdout=out)
    assert written == out.getvalue()
    rows = list(csv.DictReader(line for line in written.splitlines() if not line.startswith("#")))
    # The contract's E9: run 甲 ranks C (grade 1), A (3), D (0) in its top 3.
    ranking_a = [
        (r["rank"], r["doc_id"], r["grade"]) for r in rows if (r["system"], r["table"]) == ("a", "ranking")
    ]
    assert ranking_a == [("1", "C", "1"), ("2", "A", "3"), ("3", "D", "0")]
    assert {r["table"] for r in rows} == {"ranking", "ideal"}
    assert "report/breakdown.csv" in (folder / "README.md").read_text()
