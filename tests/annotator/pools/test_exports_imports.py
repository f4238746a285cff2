"""Exports and imports in TREC qrels, CSV and JSONL: the hash survives every round trip."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotator.models import Pool, PoolVersion, PoolVersionSource
from annotator.pools.files import PoolExportError, export_data, export_zip, pool_import
from annotator.pools.services import PoolImportError, pool_version_create
from annotator.web.uploads import upload_limit
from tests.conftest import Cast

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
TREC = SHARED / "oracles" / "trec_eval"
ROWS = [
    ("q1", "A", 3),
    ("q1", "B", 2),
    ("q1", "C", 1),
    ("q1", "D", 0),
    ("q1", "E", 0),
    ("查询-2", "文档-1", 2),
    ("q10", "x,y", 1),
]
FORMATS = ["qrels", "csv", "jsonl"]


def documented_sha256(triples: list[tuple[str, str, int]]) -> str:
    """evaluation/README.md's rule, written again: sorted lines `query TAB doc TAB grade LF`, UTF-8."""
    lines = sorted(f"{q}\t{d}\t{g}\n" for q, d, g in triples)
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def triples_from_export(text: str, fmt: str) -> list[tuple[str, str, int]]:
    """Parse an export without the app's readers, so the hash check is independent of them."""
    if fmt == "qrels":
        return [(q, d, int(g)) for q, _, d, g in (line.split() for line in text.splitlines())]
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(text)))
        assert rows[0] == ["query_id", "doc_id", "grade"]
        return [(q, d, int(g)) for q, d, g in rows[1:]]
    return [(o["query_id"], o["doc_id"], o["grade"]) for o in map(json.loads, text.splitlines())]


@pytest.fixture
def version(cast: Cast) -> PoolVersion:
    rows = [r for r in ROWS if r[1] != "x,y"]  # a comma is fine in CSV/JSONL but keep one set for all three
    return pool_version_create(
        pool=Pool.objects.create(project=cast.alpha, name="Phone"),
        judgments=[(*r, "unanimous") for r in rows],
        source=PoolVersionSource.FROZEN,
        by=cast.reviewer,
    )


def import_text(cast: Cast, text: str, fmt: str, *, name: str = "", grade_map: str = "") -> PoolVersion:
    return pool_import(
        project=cast.alpha,
        by=cast.owner,
        data=text.encode("utf-8"),
        file_name=name or f"judgments.{fmt}",
        fmt=fmt,
        pool_name=f"Imported {Pool.objects.count()}",
        grade_map=grade_map,
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_export_format_round_trips_to_the_same_hash(cast: Cast, version: PoolVersion, fmt: str) -> None:
    name, text = export_data(version, fmt)
    assert name == f"phone-v1.{fmt}"
    assert documented_sha256(triples_from_export(text, fmt)) == version.sha256

    imported = import_text(cast, text, fmt)

    assert imported.sha256 == version.sha256
    assert imported.source == PoolVersionSource.IMPORTED
    assert imported.file_name == f"judgments.{fmt}"
    assert imported.file_sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert imported.judgments_by_query() == version.judgments_by_query()
    assert set(imported.judgments.values_list("source", flat=True)) == {"imported"}


def test_the_three_exports_differ_as_files_but_carry_one_hash(version: PoolVersion) -> None:
    texts = {fmt: export_data(version, fmt)[1] for fmt in FORMATS}
    assert len(set(texts.values())) == 3
    assert {documented_sha256(triples_from_export(t, fmt)) for fmt, t in texts.items()} == {version.sha256}


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_zip_holds_the_data_file_and_a_manifest_with_the_hash(version: PoolVersion, fmt: str) -> None:
    name, payload = export_zip(version, fmt)
    assert name == f"phone-v1-{fmt}.zip"
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        assert sorted(archive.namelist()) == sorted([f"phone-v1.{fmt}", "manifest.json"])
        data = archive.read(f"phone-v1.{fmt}")
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["sha256"] == version.sha256 == documented_sha256(triples_from_export(data.decode(), fmt))
    assert manifest["format"] == fmt
    assert manifest["pool"] == "Phone" and manifest["version"] == 1
    assert manifest["counts"] == {"judgments": 6, "queries": 2, "by_grade": {"0": 2, "1": 1, "2": 2, "3": 1}}
    assert manifest["data_file"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert (
        "TAB" in manifest["canonical_serialisation"] and "code point" in manifest["canonical_serialisation"]
    )
    assert manifest["frozen_by"] == "rita"
    assert export_zip(version, fmt)[1] == payload  # the same version downloads as the same bytes


def test_an_id_with_a_space_cannot_be_written_as_qrels_but_can_as_csv(cast: Cast) -> None:
    spaced = pool_version_create(
        pool=Pool.objects.create(project=cast.alpha, name="Spaced"),
        judgments=[("q1", "doc one", 2, "unanimous")],
        source="frozen",
        by=cast.reviewer,
    )
    with pytest.raises(PoolExportError, match="whitespace"):
        export_data(spaced, "qrels")
    assert import_text(cast, export_data(spaced, "csv")[1], "csv").sha256 == spaced.sha256


def test_trec_evals_qrels_test_imports_exports_and_reimports_to_the_same_hash(cast: Cast) -> None:
    raw = (TREC / "qrels.test").read_bytes()
    independent = documented_sha256(
        [(q, d, int(g)) for q, _, d, g in (line.split() for line in raw.decode().splitlines())]
    )

    first = pool_import(
        project=cast.alpha,
        by=cast.owner,
        data=raw,
        file_name="qrels.test",
        fmt="qrels",
        pool_name="trec_eval",
    )

    assert first.sha256 == independent
    assert first.counts["judgments"] == len(raw.decode().splitlines())
    assert first.counts["queries"] == 3
    assert first.file_sha256 == hashlib.sha256(raw).hexdigest()
    for fmt in FORMATS:
        _, text = export_data(first, fmt)
        again = pool_import(
            project=cast.alpha,
            by=cast.owner,
            data=text.encode(),
            file_name=f"again.{fmt}",
            fmt=fmt,
            pool_name=f"again {fmt}",
        )
        assert again.sha256 == first.sha256
        # Into the same pool the same judgments are refused: a version is permanent, and a copy of
        # the newest one is an import sent twice (a double click must not make two versions).
        with pytest.raises(
            PoolImportError, match=r"exactly those of trec_eval version 1 .* nothing was imported"
        ):
            pool_import(
                project=cast.alpha,
                by=cast.owner,
                data=text.encode(),
                file_name=f"again.{fmt}",
                fmt=fmt,
                pool=first.pool,
            )
    assert list(first.pool.versions.values_list("number", flat=True)) == [1]


def test_qrels_rel_level_is_refused_at_the_line_of_its_first_grade_outside_0_to_3(cast: Cast) -> None:
    raw = (TREC / "qrels.rel_level").read_bytes()
    first_bad = next(
        n for n, line in enumerate(raw.decode().splitlines(), 1) if not 0 <= int(line.split()[3]) <= 3
    )
    bad_grade = raw.decode().splitlines()[first_bad - 1].split()[3]

    with pytest.raises(PoolImportError) as refused:
        pool_import(
            project=cast.alpha,
            by=cast.owner,
            data=raw,
            file_name="qrels.rel_level",
            fmt="qrels",
            pool_name="levels",
        )

    message = str(refused.value)
    assert f"qrels.rel_level, line {first_bad}:" in message
    assert f"grade {bad_grade} is outside 0..3" in message
    assert not Pool.objects.filter(name="levels").exists()  # all or nothing


def test_qrels_rel_level_imports_with_a_documented_grade_map(cast: Cast) -> None:
    raw = (TREC / "qrels.rel_level").read_bytes()
    mapping = {-1: 0, 4: 3}
    expected = documented_sha256(
        [
            (q, d, mapping.get(int(g), int(g)))
            for q, _, d, g in (line.split() for line in raw.decode().splitlines())
        ]
    )
    version = pool_import(
        project=cast.alpha,
        by=cast.owner,
        data=raw,
        file_name="qrels.rel_level",
        fmt="qrels",
        pool_name="levels",
        grade_map="-1:0,4:3",
    )
    assert version.sha256 == expected
    assert version.provenance["imported"]["grade_map"] == {"-1": 0, "4": 3}


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        (
            "qrels",
            "q1 0 A 3\nq1 0 B 2\nq1 0 C 7\n",
            "line 3: query “q1”, document “C”: grade 7 is outside 0..3",
        ),
        ("qrels", "q1 0 A 3\nq1 0 A 2\n", "judged twice (lines 1 and 2)"),
        ("qrels", "q1 0 A\n", "line 1: expected 4 fields"),
        ("qrels", "q1 0 A 2.5\n", "grade “2.5” is not an integer"),
        ("csv", "query_id,doc_id\nq1,A\n", "lacks grade"),
        (
            "csv",
            "query_id,doc_id,grade\nq1,A,1\nq1,,2\n",
            "line 3: query “q1”: doc_id must be non-empty text or a whole number",
        ),
        (
            "jsonl",
            '{"query_id": "q1", "doc_id": "A", "grade": 1}\n{"query_id": "q1", "doc_id": "B", "grade": '
            '"2"}\n',
            "line 2",
        ),
        (
            "jsonl",
            '{"query_id": "q1", "doc_id": "A", "grade": true}\n',
            "grade must be a JSON integer 0..3, got true",
        ),
        ("qrels", "", "no judgments"),
    ],
)
def test_a_bad_file_is_refused_whole_with_the_line_and_value(
    cast: Cast, fmt: str, text: str, message: str
) -> None:
    with pytest.raises(PoolImportError) as refused:
        import_text(cast, text, fmt)
    assert message in str(refused.value)
    assert not PoolVersion.objects.exists() and not Pool.objects.exists()


def test_a_file_that_is_not_utf8_is_refused_with_its_line(cast: Cast) -> None:
    data = b"q1 0 A 3\nq1 0 B 2\n" + "q1 0 é 1\n".encode("latin-1")
    with pytest.raises(PoolImportError, match=r"bad.qrels, line 3: the file is not UTF-8 text"):
        pool_import(
            project=cast.alpha, by=cast.owner, data=data, file_name="bad.qrels", fmt="qrels", pool_name="x"
        )


def test_a_nul_character_is_refused_with_its_line(cast: Cast) -> None:
    data = b"q1 0 A 3\nq1 0 B\x00 2\n"
    with pytest.raises(PoolImportError, match=r"bad.qrels, line 2: the file contains a NUL character"):
        pool_import(
            project=cast.alpha, by=cast.owner, data=data, file_name="bad.qrels", fmt="qrels", pool_name="x"
        )
    assert not Pool.objects.exists()


def test_a_malformed_grade_map_is_refused(cast: Cast) -> None:
    with pytest.raises(PoolImportError, match="is not FROM:TO"):
        import_text(cast, "q1 0 A 4\n", "qrels", grade_map="4=3")
    with pytest.raises(PoolImportError, match="outside 0..3"):
        import_text(cast, "q1 0 A 4\n", "qrels", grade_map="4:5")


def test_only_owners_import(cast: Cast) -> None:
    with pytest.raises(PermissionDenied):
        pool_import(
            project=cast.alpha,
            by=cast.reviewer,
            data=b"q1 0 A 1\n",
            file_name="a.qrels",
            fmt="qrels",
            pool_name="x",
        )


def test_an_import_into_an_existing_name_without_choosing_the_pool_is_refused(
    cast: Cast, version: PoolVersion
) -> None:
    with pytest.raises(PoolImportError, match="A pool named Phone exists already"):
        pool_import(
            project=cast.alpha,
            by=cast.owner,
            data=b"q1 0 A 1\n",
            file_name="a.qrels",
            fmt="qrels",
            pool_name="Phone",
        )


# ---- the management commands ----------------------------------------------------------------------


def test_the_commands_export_and_reimport_to_the_same_hash(
    cast: Cast, version: PoolVersion, tmp_path: Path
) -> None:
    for fmt in FORMATS:
        target = tmp_path / f"phone.{fmt}"
        call_command("export_pool", "alpha", "Phone", "--format", fmt, "--output", str(target))
        manifest = json.loads(Path(f"{target}.manifest.json").read_text())
        assert manifest["sha256"] == version.sha256
        out = io.StringIO()
        call_command(
            "import_pool", "alpha", str(target), "--pool", f"Phone {fmt}", "--by", "olivia", stdout=out
        )
        assert f"sha256 {version.sha256}" in out.getvalue()
    assert set(PoolVersion.objects.values_list("sha256", flat=True)) == {version.sha256}


def test_export_pool_writes_to_stdout_and_zip(cast: Cast, version: PoolVersion, tmp_path: Path) -> None:
    out = io.StringIO()
    call_command("export_pool", "alpha", "Phone", "--number", "1", stdout=out)
    assert documented_sha256(triples_from_export(out.getvalue(), "qrels")) == version.sha256
    call_command(
        "export_pool",
        "alpha",
        "Phone",
        "--format",
        "jsonl",
        "--output",
        str(tmp_path / "p.zip"),
        stderr=io.StringIO(),
    )
    with zipfile.ZipFile(tmp_path / "p.zip") as archive:
        assert json.loads(archive.read("manifest.json"))["sha256"] == version.sha256
    # Without --format the output's name chooses (out.csv holds CSV, not qrels text).
    call_command("export_pool", "alpha", "Phone", "--output", str(tmp_path / "out.csv"), stderr=io.StringIO())
    text = (tmp_path / "out.csv").read_text()
    assert (
        text.startswith("query_id,doc_id,grade")
        and documented_sha256(triples_from_export(text, "csv")) == version.sha256
    )


def test_import_pool_with_a_grade_map_from_the_shell(cast: Cast) -> None:
    out = io.StringIO()
    call_command(
        "import_pool",
        "alpha",
        str(TREC / "qrels.rel_level"),
        "--pool",
        "levels",
        "--by",
        "olivia",
        "--grade-map=-1:0,4:3",
        stdout=out,
    )
    assert "Imported qrels.rel_level as levels version 1: 3681 judgments in 3 queries" in out.getvalue()


def test_an_id_too_long_or_with_a_tab_is_refused_with_its_line(cast: Cast, tmp_path: Path) -> None:
    """Before: a 300-character ID was a DataError on PostgreSQL (traceback), a tab gave no line."""
    long_id = "D" * 300
    cases = {
        # Every refusal of a pool file reads alike ("file ...", "Nothing ...").
        "long.qrels": (
            f"q1 0 A 1\nq1 0 {long_id} 2\n",
            f"Nothing was imported: file long.qrels, line 2: ID “{'D' * 39}…” "
            "has 300 characters; at most 255",
        ),
        "latin1.qrels": ("q1 0 A 1\nq1 0 caf\xe9 2\n", "Nothing was imported: file latin1.qrels, line 2: "),
        "tab.csv": (
            'query_id,doc_id,grade\nq1,A,1\nq1,"C\tD",2\n',
            "line 3: query “q1”: document ID “C\\tD” contains the character U+0009",
        ),
    }
    for name, (text, message) in cases.items():
        target = tmp_path / name
        target.write_bytes(text.encode("latin-1" if name.startswith("latin1") else "utf-8"))
        with pytest.raises(CommandError) as refused:
            call_command(
                "import_pool", "alpha", str(target), "--pool", "ids", "--by", "olivia", stdout=io.StringIO()
            )
        assert refused.value.returncode == 2 and message in str(refused.value), str(refused.value)
    assert not Pool.objects.filter(name="ids").exists()


@pytest.mark.parametrize(
    ("command", "args", "message"),
    [
        ("import_pool", ["alpha", str(TREC / "qrels.rel_level"), "--pool", "p", "--by", "olivia"], "line 19"),
        ("import_pool", ["alpha", "/nonexistent/q.qrels", "--pool", "p", "--by", "olivia"], "cannot read"),
        (
            "import_pool",
            ["nope", str(TREC / "qrels.test"), "--pool", "p", "--by", "olivia"],
            "no project 'nope'",
        ),
        (
            "import_pool",
            ["alpha", str(TREC / "qrels.test"), "--pool", "p", "--by", "rita"],
            "needs the Owner role",
        ),
        (
            "import_pool",
            ["alpha", str(TREC / "qrels.test"), "--pool", "p", "--by", "olivia", "--format", "xml"],
            "unknown format",
        ),
        ("export_pool", ["alpha", "Nope"], "no pool named 'Nope'"),
        ("export_pool", ["alpha", "Phone", "--number", "7"], "has no version 7"),
        ("export_pool", ["alpha", "Phone", "--format", "xlsx"], "unknown format 'xlsx'"),
        # --number 0 is no version (not the newest); bad --output paths are one error, no traceback.
        ("export_pool", ["alpha", "Phone", "--number", "0"], "has no version 0"),
        (
            "export_pool",
            ["alpha", "Phone", "--output", "/nonexistent/x.csv"],
            "folder /nonexistent does not exist",
        ),
        ("export_pool", ["alpha", "Phone", "--output", "/tmp"], "cannot write /tmp: it is a folder"),
        (
            "import_pool",
            ["alpha", str(TREC / "qrels.test"), "--pool", "p" * 201, "--by", "olivia"],
            "A pool name has at most 200 characters; this one has 201.",
        ),
    ],
)
def test_bad_command_input_exits_2_with_one_line(
    cast: Cast, version: PoolVersion, command: str, args: list[str], message: str
) -> None:
    with pytest.raises(CommandError) as refused:
        call_command(command, *args, stdout=io.StringIO(), stderr=io.StringIO())
    assert refused.value.returncode == 2
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, payload in members.items():
            archive.writestr(name, payload)
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_exported_zip_imports_as_a_version_with_the_same_hash(
    cast: Cast, client: Client, version: PoolVersion, fmt: str
) -> None:
    """The app's own export, not 'not UTF-8', round-trips through the import page, its format read
    from the manifest whatever the form says."""
    name, payload = export_zip(version, fmt)
    client.force_login(cast.owner)
    response = client.post(
        reverse("pool_import", kwargs={"slug": "alpha"}),
        {
            "file": SimpleUploadedFile(name, payload),
            "format": "qrels" if fmt != "qrels" else "csv",
            "pool_name": "Round trip",
            "grade_map": "",
        },
    )
    assert response.status_code == 302, response.content.decode()[-2000:]
    imported = PoolVersion.objects.get(pool__name="Round trip")
    assert imported.sha256 == version.sha256
    assert imported.file_name == f"phone-v1.{fmt}"


def test_a_changed_or_foreign_zip_is_refused_and_imports_nothing(cast: Cast, version: PoolVersion) -> None:
    name, payload = export_zip(version, "qrels")
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        data = archive.read("phone-v1.qrels")
        manifest = json.loads(archive.read("manifest.json"))
    edited = data.replace(b"q1 0 A 3", b"q1 0 A 2")
    forged = dict(manifest, data_file=dict(manifest["data_file"], sha256=hashlib.sha256(edited).hexdigest()))
    cases = {
        "changed data": (
            _zip({"phone-v1.qrels": edited, "manifest.json": json.dumps(manifest).encode()}),
            "does not match the SHA-256 in manifest.json",
        ),
        "changed data and file hash": (
            _zip({"phone-v1.qrels": edited, "manifest.json": json.dumps(forged).encode()}),
            "the archive was changed after export",
        ),
        # Read like every other refusal of a pool file, with its prefix.
        "no manifest": (
            _zip({"phone-v1.qrels": data}),
            "^Nothing was imported: file x.zip: this zip has no manifest.json",
        ),
        "bad manifest": (
            _zip({"phone-v1.qrels": data, "manifest.json": b"[1]"}),
            "is not the manifest of a pool export",
        ),
        "missing data": (_zip({"manifest.json": json.dumps(manifest).encode()}), "is not in the zip"),
        "damaged": (payload[:40], "cannot be read"),
    }
    before = (Pool.objects.count(), PoolVersion.objects.count())
    for case, (archive, message) in cases.items():
        with pytest.raises(PoolImportError, match=message):
            pool_import(
                project=cast.alpha,
                by=cast.owner,
                data=archive,
                file_name="x.zip",
                fmt="qrels",
                pool_name=f"Zip {case}",
            )
        assert (Pool.objects.count(), PoolVersion.objects.count()) == before, case
    with pytest.raises(PoolImportError, match="A grade map does not apply"):
        pool_import(
            project=cast.alpha,
            by=cast.owner,
            data=payload,
            file_name=name,
            fmt="qrels",
            pool_name="Mapped",
            grade_map="4:3",
        )


def test_a_zip_given_to_a_text_import_says_what_it_is() -> None:
    from annotator.documents.readers import ImportFileError, read_documents

    with pytest.raises(
        ImportFileError, match="the file is a zip archive; upload the text file inside it instead"
    ):
        read_documents(_zip({"docs.csv": b"doc_id,body\nA,x\n"}), "csv")
    import gzip

    with pytest.raises(
        ImportFileError, match="the file is gzip-compressed; decompress it and upload the text file"
    ):
        read_documents(gzip.compress(b"doc_id,body\nA,x\n"), "csv")


def test_importing_the_newest_versions_judgments_again_is_refused_and_an_earlier_ones_noted(
    cast: Cast, client: Client
) -> None:
    client.force_login(cast.owner)
    text = "q1 0 A 3\nq1 0 B 1\n"
    first = client.post(
        reverse("pool_import", kwargs={"slug": "alpha"}),
        {"file": SimpleUploadedFile("a.qrels", text.encode()), "format": "auto", "pool_name": "Twice"},
        follow=True,
    )
    assert "holds exactly the same judgments" not in first.content.decode()
    pool = Pool.objects.get(name="Twice")

    def send(body: str) -> str:
        return client.post(
            reverse("pool_import", kwargs={"slug": "alpha"}),
            {"file": SimpleUploadedFile("b.qrels", body.encode()), "format": "auto", "pool": pool.pk},
            follow=True,
        ).content.decode()

    # A copy of the newest version is an import sent twice: refused, nothing written.
    assert "exactly those of Twice version 1" in send(text)
    assert pool.versions.count() == 1
    # Back to an earlier version's judgments after a change: a new version, with a word on it.
    assert "holds exactly the same judgments" not in send("q1 0 A 2\nq1 0 B 1\n")
    assert "Version 3 holds exactly the same judgments as version 1 (same SHA-256)." in send(text)


def test_an_existing_pool_and_a_new_name_together_are_refused_not_one_dropped(
    cast: Cast, client: Client
) -> None:
    pool = Pool.objects.create(project=cast.alpha, name="Phone")
    client.force_login(cast.owner)
    html = client.post(
        reverse("pool_import", kwargs={"slug": "alpha"}),
        {
            "file": SimpleUploadedFile("a.qrels", b"q1 0 A 3\n"),
            "format": "auto",
            "pool": pool.pk,
            "pool_name": "Other",
        },
    ).content.decode()
    assert "A name is for a new pool, but Phone is chosen above" in html
    assert not PoolVersion.objects.exists() and not Pool.objects.filter(name="Other").exists()


def test_a_form_error_elsewhere_asks_for_the_file_again(cast: Cast, client: Client) -> None:
    """The page comes back without the chosen file, so it says to choose it again, not only
    "Please select a file" on the next submit."""
    client.force_login(cast.owner)
    html = client.post(
        reverse("pool_import", kwargs={"slug": "alpha"}),
        {"file": SimpleUploadedFile("a.qrels", b"q1 0 A 3\n"), "format": "auto", "pool_name": ""},
    ).content.decode()
    assert "Name the new pool, or choose an existing pool above." in html
    assert "Choose the file again: a browser does not keep a chosen file" in html
    without_file = client.post(
        reverse("pool_import", kwargs={"slug": "alpha"}), {"format": "auto"}
    ).content.decode()
    assert "Choose the file again" not in without_file
    # A refusal of the import itself (here: the name is taken) asks for it too.
    Pool.objects.create(project=cast.alpha, name="Taken")
    taken = client.post(
        reverse("pool_import", kwargs={"slug": "alpha"}),
        {"file": SimpleUploadedFile("a.qrels", b"q1 0 A 3\n"), "format": "auto", "pool_name": "Taken"},
    ).content.decode()
    assert "A pool named Taken exists already" in taken and "Choose the file again" in taken
    assert not Pool.objects.filter(project=cast.alpha).exclude(name__in=["Phone", "Taken"]).exists()


def _patch_headers(
    archive: bytes, member: str, *, size: int | None = None, flags: int | None = None
) -> bytes:
    """Rewrite what a zip *claims* about a member (its uncompressed size, its flag bits) in both
    the local and the central directory header, as a crafted archive would."""
    data = bytearray(archive)
    name = member.encode()
    for signature, size_at, flags_at, name_at in ((b"PK\x03\x04", 22, 6, 30), (b"PK\x01\x02", 24, 8, 46)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            if data[start + name_at : start + name_at + len(name)] == name:
                if size is not None:
                    data[start + size_at : start + size_at + 4] = size.to_bytes(4, "little")
                if flags is not None:
                    data[start + flags_at : start + flags_at + 2] = flags.to_bytes(2, "little")
            start += 4
    return bytes(data)


def test_a_crafted_zip_is_refused_without_unpacking_it_whole(cast: Cast) -> None:
    """A member declaring 10 bytes unpacked up to 1 GiB before being cut; a nested manifest, an
    encrypted member or a lying header were 500s (review)."""
    zeros = b"\0" * (upload_limit("pools") + 10)
    manifest = {
        "data_file": {"name": "big.qrels", "sha256": hashlib.sha256(zeros).hexdigest()},
        "format": "qrels",
        "sha256": "0" * 64,
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("big.qrels", zeros)
        archive.writestr("manifest.json", json.dumps(manifest))
    honest = buffer.getvalue()
    lying = _patch_headers(honest, "big.qrels", size=10)
    encrypted = _patch_headers(honest, "manifest.json", flags=1)
    nested = _zip({"q.qrels": b"q 0 d 1\n", "manifest.json": b"[" * 100_000 + b"]" * 100_000})
    cases = [
        (honest, "big.qrels is larger than"),
        (lying, "big.qrels: |cannot be read|larger than"),
        (encrypted, "cannot be read"),
        (nested, "is not the manifest of a pool export"),
    ]
    for archive, message in cases:
        with pytest.raises(PoolImportError, match=message):
            pool_import(
                project=cast.alpha,
                by=cast.owner,
                data=archive,
                file_name="x.zip",
                fmt="qrels",
                pool_name="Zip",
            )
    assert not Pool.objects.filter(name="Zip").exists()
    # `import_pool` reads the owner's own disk: no upload limit (its file is read, then judged).
    with pytest.raises(PoolImportError) as unlimited:
        pool_import(
            project=cast.alpha,
            by=cast.owner,
            data=honest,
            file_name="x.zip",
            fmt="qrels",
            pool_name="Zip",
            max_unpacked=None,
        )
    assert "larger than" not in str(unlimited.value) and "NUL character" in str(unlimited.value)


def test_a_version_holding_an_id_from_before_the_invisible_character_rule_still_freezes_and_verifies(
    cast: Cast,
) -> None:
    """Readers and imports now refuse zero-width and bidi characters in IDs; a document imported
    before that may still be in a set. The canonical text holds it (it breaks no line), so such a
    set still freezes, and versions frozen earlier keep verifying."""
    from annotator.models import Pool, PoolVersionSource
    from annotator.pools.models import canonical_serialisation
    from annotator.pools.services import pool_version_create
    from evaluation.formats.ids import bad_id_chars

    assert bad_id_chars("d1\u200b")
    pool = Pool.objects.create(project=cast.alpha, name="Legacy")
    version = pool_version_create(
        pool=pool,
        judgments=[("q1", "d1\u200b", 2, "unanimous")],
        source=PoolVersionSource.FROZEN,
        by=cast.owner,
    )
    version.verify()
    assert "d1\u200b" in version.canonical
    with pytest.raises(ValueError, match="holds a tab"):
        canonical_serialisation([("q1", "d\t1", 2)])
