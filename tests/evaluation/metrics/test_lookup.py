"""The batch engine's grade lookups (evaluation/metrics/lookup.py) against plain dict lookups.

The words and the hash table only decide where to look and whether the dicts must be asked: the
grade the engine uses must be the dict's grade, for every ID, whatever the IDs look like (long,
non-ASCII, lone surrogates, NUL, shared by several queries, spilling into the next query's
slots) and whatever the hash does (a constant hash puts every ID of a query in one slot).
"""

from __future__ import annotations

from itertools import chain

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics import Pool, Run, Settings, evaluate_run, lookup, score_query
from evaluation.metrics.batch import _grades_of
from evaluation.metrics.lookup import ASK, NOT_IN_POOL, TOO_LONG, IdTable, encode_ids

# IDs of every kind the words handle differently: one word, several, too long for the width,
# non-ASCII (2-4 UTF-8 bytes a character), a lone surrogate, prefixes of each other.
ALPHABET = st.sampled_from(["a", "b", "Z", "9", "-", "é", "文", "😀", "\ud800", " ", "\t"])
IDS = st.text(ALPHABET, min_size=1, max_size=12) | st.sampled_from(
    ["d1", "d1a", "d10", "abcdefgh", "abcdefghi", "x" * 64, "x" * 65, "y" * 200, "文档甲", "文档乙"]
)


def dict_grades(pool: dict[str, dict[str, int]], queries: list[str], docs: list[str]) -> list[int]:
    return [pool[q].get(d, NOT_IN_POOL) for q, d in zip(queries, docs, strict=True)]


def table_of(pool: dict[str, dict[str, int]]) -> IdTable:
    words = encode_ids(list(chain.from_iterable(pool.values())))
    assert words is not None
    lengths = np.array([len(docs) for docs in pool.values()], dtype=np.int64)
    grades = np.array(list(chain.from_iterable(docs.values() for docs in pool.values())), dtype=np.int64)
    return IdTable.build(words, lengths, grades)


pools = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3", "问题"]),
    st.dictionaries(IDS, st.integers(0, 3), min_size=1, max_size=25),
    min_size=1,
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(pools, st.data())
def test_every_answer_of_the_table_is_the_dicts_and_with_them_every_grade_is(
    pool: dict[str, dict[str, int]], data: st.DataObject
) -> None:
    query_ids = list(pool)
    judged = sorted(set(chain.from_iterable(pool.values())))
    # Rows: documents judged for this query, for another query only, or for none.
    rows = data.draw(
        st.lists(
            st.tuples(st.sampled_from(query_ids), st.sampled_from(judged) | IDS),
            max_size=40,
            unique_by=lambda row: row[1],  # one run ranks a document once
        )
    )
    queries = [q for q, _ in rows]
    docs = [d for _, d in rows]
    expected = dict_grades(pool, queries, docs)
    q_index = np.array([query_ids.index(q) for q in queries], dtype=np.int64)

    words = encode_ids(docs)
    assert words is not None
    answers = table_of(pool).grades(words, np.arange(len(rows)), q_index).tolist()
    assert [a for a, e in zip(answers, expected, strict=True) if a != ASK] == [
        e for a, e in zip(answers, expected, strict=True) if a != ASK
    ]
    # With the dicts for what the table leaves: every grade.
    run = Run.from_rankings({"all": docs})
    assert _grades_of(Pool(pool), run, np.arange(len(docs)), q_index).tolist() == expected


def test_equal_words_mean_equal_ids() -> None:
    ids = [
        "a",
        "a ",
        "ab",
        "abcdefgh",
        "abcdefgh\u00e9",
        "é",
        "e\u0301",
        "\ud800",
        "\ud800\udc00",
        "😀",
        "x" * 64,
    ]
    words = encode_ids(ids)
    assert words is not None
    rows = [tuple(row) for row in words.tolist()]
    assert len(set(rows)) == len(ids)  # distinct IDs, distinct words
    again = encode_ids(list(reversed(ids)))
    assert again is not None and [tuple(r) for r in again.tolist()][::-1] == rows
    # Little-endian UTF-8, zero after the end: "ab" is 0x6261.
    assert words[ids.index("ab"), 0] == 0x6261


def test_an_id_holding_nul_leaves_the_whole_list_to_the_dicts() -> None:
    assert encode_ids(["a", "b\x00c"]) is None
    pool = Pool({"q": {"a": 1, "b\x00c": 3, "b": 2}})
    run = Run.from_rankings({"q": ["b\x00c", "b", "a"]})
    assert run._id_words is None
    result = evaluate_run(pool, run, Settings(k=3))
    assert result.dcg[0] == score_query(["b\x00c", "b", "a"], pool["q"], Settings(k=3)).dcg
    # A pool with NUL gets no table; a run without NUL is looked up in its dicts.
    assert pool._id_table is None
    assert evaluate_run(pool, Run.from_rankings({"q": ["b", "a"]}), Settings(k=2)).dcg[0] == 2 + 1 / np.log2(
        3
    )


def test_ids_longer_than_the_width_are_looked_up_by_string() -> None:
    # 256 short IDs and one long: the width holds the short ones; the long one is too long.
    short = [f"d{i}" for i in range(300)]
    long = "helpcenter/article/" + "x" * 50
    words = encode_ids([*short, long])
    assert words is not None and words.shape[1] == 1 and words[-1, 0] == TOO_LONG
    pool = Pool({"q": {**dict.fromkeys(short, 1), long: 3}})
    ranking = [long, "d5", "nowhere", long[:-1]]
    result = evaluate_run(pool, Run.from_rankings({"q": ranking}), Settings(k=4, unjudged="zero"))
    assert result.dcg[0] == score_query(ranking, pool["q"], Settings(k=4, unjudged="zero")).dcg
    assert result.unjudged[0] == 2


@pytest.mark.parametrize(
    ("pool_ids", "run_ids"),
    [(["ab", "cd"], ["abcdefghijkl", "ab"]), (["abcdefghijkl", "ab"], ["ab", "abcdefghijkl", "abcdefghijk"])],
)
def test_a_run_and_a_pool_of_different_widths_agree_with_the_dicts(
    pool_ids: list[str], run_ids: list[str]
) -> None:
    pool = Pool({"q": {doc: i + 1 for i, doc in enumerate(pool_ids)}})
    result = evaluate_run(pool, Run.from_rankings({"q": run_ids}), Settings(k=3, unjudged="zero"))
    assert result.dcg[0] == score_query(run_ids, pool["q"], Settings(k=3, unjudged="zero")).dcg


def test_a_constant_hash_crowds_every_id_into_one_slot_and_the_grades_stay_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every ID of every query at its query's first slot: long runs of taken slots that spill into
    # the next queries' slots, where the same documents are judged with other grades.
    monkeypatch.setattr(lookup, "_MULTIPLIERS", np.zeros(lookup.MAX_WORDS, dtype=np.uint64))
    docs = [f"doc{i}" for i in range(20)]
    grades = {f"q{q}": {d: (q + i) % 4 for i, d in enumerate(docs)} for q in range(5)}
    pool = Pool(grades)
    for q in grades:
        ranking = [*reversed(docs), "unjudged"]
        result = evaluate_run(
            pool, Run.from_rankings({q: ranking}), Settings(k=21, unjudged="zero", missing_queries="zero")
        )
        assert (
            result.dcg[pool._index[q]] == score_query(ranking, pool[q], Settings(k=21, unjudged="zero")).dcg
        )
    rows = np.arange(len(docs))
    words = encode_ids(docs)
    assert words is not None
    answers = pool._id_table.grades(words, rows, np.full(len(docs), 2))  # type: ignore[union-attr]
    assert (answers == ASK).sum() >= len(docs) - lookup.PROBES  # the crowded ones were asked
    table_answers = answers[answers != ASK]
    assert table_answers.tolist() == [grades["q2"][d] for d, a in zip(docs, answers, strict=True) if a != ASK]


def test_the_engine_on_the_benchmarks_shape_equals_the_dicts_and_seldom_asks_them() -> None:
    rng = np.random.default_rng(7)
    grades = {
        f"q{q}": {f"d{q}-{i}": int(g) for i, g in enumerate(rng.integers(0, 4, 50))} for q in range(200)
    }
    rankings = {
        q: [f"d{q}-{i}" for i in rng.permutation(50)[:30]] + [f"u{q}-{i}" for i in range(5)] for q in grades
    }
    pool, run = Pool(grades), Run.from_rankings(rankings)
    result = evaluate_run(pool, run, Settings(k=10, unjudged="zero"))
    for q in grades:
        assert (
            result.dcg[pool._index[q]]
            == score_query(rankings[q], grades[q], Settings(k=10, unjudged="zero")).dcg
        )
    table, words = pool._id_table, run._id_words
    assert table is not None and words is not None
    queries = np.repeat(np.arange(len(grades)), 35)
    answers = table.grades(words, np.arange(run.rows), queries).tolist()
    expected = [grades[q].get(d, NOT_IN_POOL) for q in grades for d in rankings[q]]
    assert sum(a == ASK for a in answers) < run.rows // 100  # the dicts are the exception
    assert [a for a, e in zip(answers, expected, strict=True) if a != ASK] == [
        e for a, e in zip(answers, expected, strict=True) if a != ASK
    ]


def test_queries_with_no_id_in_the_table_still_answer() -> None:
    # One query judges nothing, one only IDs too long for the words, one short IDs: the first two
    # have a single home slot (which a neighbour's IDs may fill), and every answer is the dicts'.
    long = ["L" * 70 + str(i) for i in range(3)]
    short = [f"s{i}" for i in range(300)]
    grades = {"empty": {}, "long": {d: 2 for d in long}, "short": {d: i % 4 for i, d in enumerate(short)}}
    pool = Pool(grades)
    for query, ranking in (
        ("empty", ["s1", long[0]]),
        ("long", [*long, "s1"]),
        ("short", ["s5", long[1], "s299"]),
    ):
        settings_ = Settings(k=3, unjudged="zero")
        result = evaluate_run(pool, Run.from_rankings({query: ranking}), settings_)
        assert result.dcg[pool._index[query]] == score_query(ranking, grades[query], settings_).dcg


def test_a_table_too_large_for_packed_sort_keys_is_laid_out_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    grades = {f"q{q}": {f"d{q}-{i}": (q + i) % 4 for i in range(40)} for q in range(30)}
    packed = table_of(grades)
    monkeypatch.setattr(lookup, "_PACKED", 8)  # as if the pool had over 2**31 slots
    sorted_apart = table_of(grades)
    assert sorted_apart.slots.tolist() == packed.slots.tolist()
