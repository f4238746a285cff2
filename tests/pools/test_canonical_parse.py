"""Reading the canonical text back gives exactly the judgments that were serialised."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from annotator.models.pools import canonical_serialisation, parse_canonical

# Any ID the serialisation accepts: no tab, CR or LF, no surrounding white space. Other separators
# (U+2028, U+001C, ...) are legal inside IDs and must not split a line.
ids = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\t\n\r"), min_size=1, max_size=8
).filter(lambda value: value == value.strip())


@given(st.dictionaries(st.tuples(ids, ids), st.integers(min_value=0, max_value=3), max_size=60))
def test_parsing_the_canonical_text_returns_the_serialised_judgments(judgments: dict[tuple[str, str], int]) -> None:
    expected: dict[str, dict[str, int]] = {}
    for (query_id, doc_id), grade in judgments.items():
        expected.setdefault(query_id, {})[doc_id] = grade
    canonical = canonical_serialisation((q, d, g) for (q, d), g in judgments.items())
    assert parse_canonical(canonical) == expected
