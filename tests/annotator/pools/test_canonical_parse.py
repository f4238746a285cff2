"""Reading the canonical text back gives exactly the judgments that were serialised."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from annotator.pools.models import canonical_serialisation, parse_canonical
from evaluation.formats.ids import bad_id_chars

# Any ID the serialisation accepts: the readers' ID rule (no control character, U+2028/2029 or
# BOM), no surrounding white space.
ids = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8).filter(
    lambda value: value == value.strip() and not bad_id_chars(value)
)


@given(st.dictionaries(st.tuples(ids, ids), st.integers(min_value=0, max_value=3), max_size=60))
def test_parsing_the_canonical_text_returns_the_serialised_judgments(
    judgments: dict[tuple[str, str], int],
) -> None:
    expected: dict[str, dict[str, int]] = {}
    for (query_id, doc_id), grade in judgments.items():
        expected.setdefault(query_id, {})[doc_id] = grade
    canonical = canonical_serialisation((q, d, g) for (q, d), g in judgments.items())
    assert parse_canonical(canonical) == expected


def test_a_version_frozen_before_the_id_rule_still_reads_back() -> None:
    """Versions frozen before the serialisation took the readers' ID rule may hold U+2028, NEL or
    U+001C inside an ID: their hashed text must still read as written, not split at them."""
    canonical = "q\u20281\tA\x85B\t2\nq\u20281\tC\x1cD\t0\n"
    assert parse_canonical(canonical) == {"q\u20281": {"A\x85B": 2, "C\x1cD": 0}}
