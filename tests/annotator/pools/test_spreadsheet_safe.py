"""IDs a spreadsheet runs as formulas (=, +, -, @, tab, CR in front): the version page and every
manifest warn, the exports keep the hashed IDs, and a spreadsheet-safe CSV prefixes those cells
with "'" and says it is not the hashed form."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import zipfile

import pytest
from django.test import Client
from django.urls import reverse

from annotator.models import PoolVersion
from annotator.pools.files import export_data, export_zip, pool_import
from annotator.pools.services import PoolImportError
from evaluation import reports
from evaluation.exports import comparison_export
from tests.conftest import Cast
from tests.factories import make_comparison, make_pool, make_run

GRADES = {
    "=1+1": {"=cmd|calc!A0": 2, "plain": 1},
    "q1": {"@SUM(A1)": 1, "-2": 0, "+x": 3, "a-b": 2},
}
# Written out by hand (the rule: a first character among = + - @): the oracle for every check.
FORMULAS = ["+x", "-2", "=1+1", "=cmd|calc!A0", "@SUM(A1)"]


@pytest.fixture
def version(cast: Cast) -> PoolVersion:
    return make_pool(cast.alpha, GRADES, by=cast.owner, name="Formulas")


def url(version: PoolVersion, name: str = "pool_version_detail") -> str:
    kwargs = {"slug": "alpha", "pool_id": version.pool_id, "version_id": version.pk}
    return reverse(name, kwargs=kwargs)


def documented_sha256(triples: list[tuple[str, str, int]]) -> str:
    """evaluation/README.md's hash rule, written again: sorted `query TAB doc TAB grade LF`, UTF-8."""
    return hashlib.sha256("".join(sorted(f"{q}\t{d}\t{g}\n" for q, d, g in triples)).encode()).hexdigest()


def test_the_version_lists_its_formula_ids_sorted(version: PoolVersion) -> None:
    assert version.formula_ids() == FORMULAS


def test_the_version_page_warns_and_offers_the_spreadsheet_safe_csv(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, GRADES, by=cast.owner, name="Formulas")
    client.force_login(cast.reviewer)  # reviewers and owners view pools
    page = client.get(url(version)).content.decode()
    assert 'id="formula-ids"' in page
    assert "5 IDs of this version start with =, +, -, @, a tab or a carriage return" in page
    assert "“=cmd|calc!A0”" in page
    assert "?format=csv&amp;variant=spreadsheet" in page


def test_a_version_without_formula_ids_has_neither_warning_nor_safe_csv(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, {"q1": {"a-b": 1, "d": 2}}, by=cast.owner)
    client.force_login(cast.owner)
    page = client.get(url(version)).content.decode()
    assert 'id="formula-ids"' not in page and "variant=spreadsheet" not in page
    assert "formula_ids" not in version.manifest()


def test_the_manifest_names_the_formula_ids_in_every_export(
    cast: Cast, client: Client, version: PoolVersion
) -> None:
    client.force_login(cast.owner)
    served = json.loads(client.get(url(version, "pool_version_manifest")).content)
    for fmt in ("qrels", "csv", "jsonl"):
        _name, payload = export_zip(version, fmt)
        manifest = json.loads(zipfile.ZipFile(io.BytesIO(payload)).read("manifest.json"))
        for found in (manifest, served):
            assert found["formula_ids"]["count"] == len(FORMULAS)
            assert found["formula_ids"]["examples"] == FORMULAS
            assert "spreadsheet-safe CSV" in found["formula_ids"]["warning"]


@pytest.mark.parametrize("fmt", ["qrels", "csv", "jsonl"])
def test_the_exports_keep_the_ids_as_hashed(version: PoolVersion, fmt: str) -> None:
    _name, text = export_data(version, fmt)
    if fmt == "qrels":
        triples = [(q, d, int(g)) for q, _, d, g in (line.split() for line in text.splitlines())]
    elif fmt == "csv":
        triples = [(q, d, int(g)) for q, d, g in list(csv.reader(io.StringIO(text)))[1:]]
    else:
        triples = [(o["query_id"], o["doc_id"], o["grade"]) for o in map(json.loads, text.splitlines())]
    assert sorted(triples) == sorted((q, d, g) for q, docs in GRADES.items() for d, g in docs.items())
    assert documented_sha256(triples) == version.sha256


def test_the_spreadsheet_safe_csv_prefixes_exactly_the_formula_cells(version: PoolVersion) -> None:
    name, text = export_data(version, "csv", spreadsheet=True)
    assert name == "formulas-v1-spreadsheet.csv"
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["query_id", "doc_id", "grade"]
    expected = {
        ("'" + q if q in FORMULAS else q, "'" + d if d in FORMULAS else d, str(g))
        for q, docs in GRADES.items()
        for d, g in docs.items()
    }
    assert set(map(tuple, rows[1:])) == expected
    assert ("q1", "a-b", "2") in expected  # a "-" inside an ID is no formula


def test_the_spreadsheet_safe_manifest_says_it_is_not_the_hashed_form(version: PoolVersion) -> None:
    name, payload = export_zip(version, "csv", spreadsheet=True)
    assert name == "formulas-v1-csv-spreadsheet.zip"
    archive = zipfile.ZipFile(io.BytesIO(payload))
    manifest = json.loads(archive.read("manifest.json"))
    data = archive.read(manifest["data_file"]["name"])
    assert manifest["spreadsheet_safe"]["hashed_form"] is False
    assert "not the hashed form" in manifest["spreadsheet_safe"]["note"]
    assert "?format=csv" in manifest["spreadsheet_safe"]["note"]  # how to get the hashed form
    assert "recompute_sha256" not in manifest  # the recipe would give another hash from this file
    assert manifest["sha256"] == version.sha256  # the version's, unchanged
    assert manifest["data_file"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert data.decode().count("'") == sum(
        1 for q, docs in GRADES.items() for d in docs for v in (q, d) if v in FORMULAS
    )


def test_the_spreadsheet_safe_zip_does_not_import_back(cast: Cast, version: PoolVersion) -> None:
    _name, payload = export_zip(version, "csv", spreadsheet=True)
    with pytest.raises(PoolImportError, match="spreadsheet-safe CSV, whose IDs carry an added '"):
        pool_import(
            project=cast.alpha, by=cast.owner, data=payload, file_name="x.zip", fmt="csv", pool_name="Back"
        )
    _name, plain = export_zip(version, "csv")
    imported = pool_import(
        project=cast.alpha, by=cast.owner, data=plain, file_name="x.zip", fmt="csv", pool_name="Back"
    )
    assert imported.sha256 == version.sha256


def test_the_export_view_serves_the_spreadsheet_safe_zip_and_data(
    cast: Cast, client: Client, version: PoolVersion
) -> None:
    client.force_login(cast.reviewer)
    export = url(version, "pool_version_export")
    response = client.get(export, {"format": "csv", "variant": "spreadsheet"})
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert "formulas-v1-csv-spreadsheet.zip" in response["Content-Disposition"]
    data = client.get(export, {"format": "csv", "variant": "spreadsheet", "part": "data"})
    assert data.content.decode() == export_data(version, "csv", spreadsheet=True)[1]


@pytest.mark.parametrize(
    ("fmt", "variant"), [("qrels", "spreadsheet"), ("jsonl", "spreadsheet"), ("csv", "excel")]
)
def test_an_unknown_variant_is_refused_with_a_message(
    cast: Cast, client: Client, version: PoolVersion, fmt: str, variant: str
) -> None:
    client.force_login(cast.owner)
    response = client.get(
        url(version, "pool_version_export"), {"format": fmt, "variant": variant}, follow=True
    )
    assert response.redirect_chain[-1][0] == url(version)
    assert f"Unknown export variant “{variant}”" in response.content.decode()


def test_the_spreadsheet_safe_export_needs_a_member_and_a_get(
    cast: Cast, client: Client, version: PoolVersion
) -> None:
    export = url(version, "pool_version_export")
    query = {"format": "csv", "variant": "spreadsheet"}
    assert client.get(export, query).status_code == 302  # to the login page
    for refused in (cast.outsider, cast.editor):  # not a member; a member who may not view pools
        client.force_login(refused)
        assert client.get(export, query).status_code in (403, 404)
    client.force_login(cast.owner)
    assert client.post(export + "?format=csv&variant=spreadsheet").status_code == 405


def test_the_report_csvs_prefix_text_cells_only() -> None:
    report = {
        "systems": {"a": {}, "b": {}},
        "queries": [{"query": "=HYPERLINK(1)", "a": {}, "b": {}, "delta": -0.5}],
    }
    plain = list(csv.reader(io.StringIO(reports.comparison_queries_csv(_with_columns(report)))))
    safe = list(
        csv.reader(io.StringIO(reports.comparison_queries_csv(_with_columns(report), spreadsheet=True)))
    )
    assert plain[1][0] == "=HYPERLINK(1)" and safe[1][0] == "'=HYPERLINK(1)"
    assert plain[1][-1] == safe[1][-1] == "-0.5"  # a negative number stays a number


def _with_columns(report: dict) -> dict:  # type: ignore[type-arg]
    for query in report["queries"]:
        for label in ("a", "b"):
            query[label] = dict.fromkeys(reports.QUERY_COLUMNS, 0.25)
    return report


def test_the_comparison_export_adds_spreadsheet_safe_reports_when_an_id_needs_them(cast: Cast) -> None:
    version = make_pool(cast.alpha, {"=1+1": {"A": 2, "B": 0}, "q2": {"A": 1}}, by=cast.owner)
    a = make_run(cast.alpha, "a", {"=1+1": "AB", "q2": "A"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"=1+1": "BA", "q2": "A"}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    _name, payload = comparison_export(comparison=comparison)
    archive = zipfile.ZipFile(io.BytesIO(payload))
    folder = f"comparison-{comparison.pk}/"
    plain = list(csv.reader(io.StringIO(archive.read(folder + "report/queries.csv").decode())))
    safe = list(csv.reader(io.StringIO(archive.read(folder + "report/queries-spreadsheet.csv").decode())))
    assert [row[0] for row in plain[1:]] == ["=1+1", "q2"]
    assert [row[0] for row in safe[1:]] == ["'=1+1", "q2"]
    assert plain[1][1:] == safe[1][1:]  # the numbers are the same
    assert "## Opening the CSV files in a spreadsheet" in archive.read(folder + "README.md").decode()
    manifest = json.loads(archive.read(folder + "pool/manifest.json"))
    assert manifest["formula_ids"]["examples"] == ["=1+1"]


def test_the_comparison_export_has_no_safe_copies_when_no_cell_needs_them(cast: Cast) -> None:
    version = make_pool(cast.alpha, {"q1": {"A": 2, "B": 0}}, by=cast.owner)
    a = make_run(cast.alpha, "a", {"q1": "AB"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": "BA"}, by=cast.reviewer)
    _name, payload = comparison_export(
        comparison=make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    )
    names = zipfile.ZipFile(io.BytesIO(payload)).namelist()
    assert not any(name.endswith("-spreadsheet.csv") for name in names)
