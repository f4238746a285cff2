"""Writing frozen pool versions. The only way a PoolVersion and its judgments come to exist."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotator.models import GradingSet, Pool, PoolJudgment, PoolVersion
from annotator.models.pools import canonical_serialisation, sha256_hex


@transaction.atomic
def pool_version_create(
    *,
    pool: Pool,
    judgments: Iterable[tuple[str, str, int, str]],
    source: str,
    by: AbstractBaseUser,
    grading_set: GradingSet | None = None,
    criteria_versions: list[int] | None = None,
    provenance: Mapping[str, Any] | None = None,
    exclusions: list[dict[str, Any]] | None = None,
    file_name: str = "",
    file_sha256: str = "",
    document_versions: Mapping[tuple[str, str], int] | None = None,
) -> PoolVersion:
    """Write version N+1 of `pool` from (query_id, doc_id, grade, source) rows.

    Computes the canonical serialisation, its SHA-256 and the counts; raises ValueError (naming
    the pair) for a duplicate pair, a grade outside 0..3, or an ID the serialisation cannot hold.
    """
    rows = list(judgments)
    canonical = canonical_serialisation((q, d, g) for q, d, g, _ in rows)
    latest = PoolVersion.objects.select_for_update().filter(pool=pool).order_by("-number").first()
    grades = Counter(g for _, _, g, _ in rows)
    version = PoolVersion.objects.create(
        pool=pool,
        number=(latest.number if latest else 0) + 1,
        source=source,
        grading_set=grading_set,
        canonical=canonical,
        sha256=sha256_hex(canonical),
        criteria_versions=criteria_versions or [],
        provenance=dict(provenance or {}),
        exclusions=exclusions or [],
        counts={
            "judgments": len(rows),
            "queries": len({q for q, _, _, _ in rows}),
            "by_grade": {str(g): grades.get(g, 0) for g in (0, 1, 2, 3)},
        },
        file_name=file_name,
        file_sha256=file_sha256,
        frozen_by=by,
    )
    dv = document_versions or {}
    PoolJudgment.objects.bulk_create(
        [
            PoolJudgment(
                version=version, query_id=q, doc_id=d, grade=g, source=s, document_version_id=dv.get((q, d))
            )
            for q, d, g, s in rows
        ],
        batch_size=5000,
    )
    return version
