"""Benchmark of the evaluation engine against pytrec_eval (trec_eval's C code) and scikit-learn.

Run by `make bench` as `.venv/bin/python tests/benchmarks/bench_engine.py` (not collected by
pytest). Data, fixed seed: 10,000 queries, each with a 100-document pool graded 0-3 and a
100-deep scored run (80 judged documents, 20 unjudged, distinct scores), NDCG@10 with unjudged
documents as gain 0 and trec_eval's tie rule, so that all engines compute the same numbers;
the script checks they agree before it times anything.

Printed: the median wall and CPU time of several repeats of each contender, one line per
contender saying what its timing does and does not contain, and the ratios. The contenders run
in turn, so that load from other processes hits them alike (and none finds its data still in the
CPU cache from its previous round); CPU time is the steadier figure on a busy machine.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import pytrec_eval  # noqa: E402
from sklearn.metrics import ndcg_score  # noqa: E402

from evaluation.metrics import Pool, Run, Settings, evaluate_run  # noqa: E402
from evaluation.metrics.lookup import encode_ids  # noqa: E402

QUERIES = 10_000
POOL_SIZE = 100
DEPTH = 100
JUDGED_IN_RUN = 80
K = 10
SEED = 20251129
SETTINGS = Settings(k=K, unjudged="zero", ties="docid-desc")
# pytrec_eval's own pipeline as a script: it times itself (in a fresh process, so that the
# benchmark's own large objects do not slow it down) and prints per-query lines like trec_eval -q.
PYTREC_PIPELINE = """
import sys, time
start = time.perf_counter()
import pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
result = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
elapsed = time.perf_counter() - start
sys.stdout.write("".join(f"ndcg_cut_10\\t{q}\\t{v['ndcg_cut_10']:.4f}\\n" for q, v in result.items()))
sys.stderr.write(f"{elapsed}\\n")
"""


ENGINE = "engine: evaluate_run on a loaded Pool and Run"
WORDS = "engine: a Run's ID words alone (encode_ids), made when a Run is built"
FROM_DICT = "engine: Run.from_scores(run dict) + evaluate_run"
ENGINE_BUILD = "engine: build Pool from the qrels dict + evaluate_run"
PYTREC = "pytrec_eval: RelevanceEvaluator.evaluate(run dict)"
PYTREC_BUILD = "pytrec_eval: construct evaluator + evaluate"
SKLEARN = "scikit-learn: ndcg_score on dense matrices"
COMMAND = "evaluate command, end to end (subprocess)"
SCRIPT = "pytrec_eval pipeline as a script, end to end (subprocess)"
PIPELINE = "pytrec_eval pipeline alone (parse_qrel + parse_run + evaluate), timed inside its script"
# What each timing contains, and what it does not: one line each, printed with the table.
CONTAINS = {
    ENGINE: "inside: ordering the run by score, finding its top-K IDs' grades in the pool's hash table "
    "(evaluation/metrics/lookup.py), DCG, NDCG, means, counts; not inside: building Pool and Run (a Run "
    "holds its IDs as strings and as words, made when it is built: the next row), and the pool's IDCG and "
    "hash table (made once per pool by the agreement check's call, then reused, as pytrec_eval's evaluator "
    "holds its qrels); nothing about the run is kept between calls",
    WORDS: "inside: encode_ids over the run's 1,000,000 document IDs, which every Run does when it is built "
    "(a file reader makes them from the file's bytes instead); a part of the next row",
    FROM_DICT: "inside: Run.from_scores (validation, the columns, the IDs' words) then evaluate_run as "
    "above: from the same dict pytrec_eval's evaluate takes",
    ENGINE_BUILD: "inside: Pool(qrels) (validation, copies), its IDCG and hash table, then evaluate_run as "
    "above; not inside: building the Run",
    PYTREC: "inside: evaluate(run dict); not inside: building the evaluator from the qrels "
    "(done once before)",
    PYTREC_BUILD: "inside: RelevanceEvaluator(qrels, measures) + evaluate(run dict)",
    SKLEARN: "inside: ndcg_score(y_true, y_score); not inside: building the dense matrices",
    COMMAND: "inside: a whole `manage.py evaluate` process: interpreter start (no Django setup: the command "
    "runs from evaluation/cli.py), reading both TREC files (split by columns with numpy: "
    "evaluation/formats/columns.py), the pool's IDCG and hash table, scoring, the report",
    SCRIPT: "inside: a whole python process: interpreter start, parse_qrel, parse_run, evaluate, "
    "per-query print",
    PIPELINE: "inside: that script's parse_qrel + parse_run + evaluate only (its own clock)",
}
TARGET = 20.0  # engine evaluate_run at least this many times faster than pytrec_eval's evaluate
RATIOS = [
    ("pytrec_eval evaluate / engine", PYTREC, ENGINE),
    ("pytrec_eval evaluate / engine from the run dict", PYTREC, FROM_DICT),
    ("pytrec_eval construct + evaluate / engine Pool + evaluate_run", PYTREC_BUILD, ENGINE_BUILD),
    ("pytrec_eval construct + evaluate / engine", PYTREC_BUILD, ENGINE),
    ("scikit-learn ndcg_score / engine", SKLEARN, ENGINE),
    ("pytrec_eval script / evaluate command (both end to end)", SCRIPT, COMMAND),
    ("pytrec_eval parse + evaluate alone / whole evaluate command", PIPELINE, COMMAND),
]


def _copy(text: str) -> str:
    """An equal string that is a different object (slicing a whole str returns the same one)."""
    return (text + " ")[:-1]


def generate() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]], np.ndarray, np.ndarray]:
    """Pools, runs (as pytrec_eval's dicts, in rank order) and sklearn's dense matrices."""
    rng = np.random.default_rng(SEED)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    # sklearn columns per query: 100 pool documents then 20 unjudged ones (relevance 0). Pool
    # documents a run missed score below everything, so they count in sklearn's ideal only.
    y_true = np.zeros((QUERIES, POOL_SIZE + DEPTH - JUDGED_IN_RUN))
    y_score = np.full(y_true.shape, -1.0)
    for q in range(QUERIES):
        query = f"q{q}"
        docs = [f"d{q}-{i}" for i in range(POOL_SIZE)]
        grades = rng.integers(0, 4, POOL_SIZE)
        qrels[query] = dict(zip(docs, grades.tolist(), strict=True))
        chosen = rng.choice(POOL_SIZE, JUDGED_IN_RUN, replace=False)
        # The run's IDs are string objects of their own, as when pool and run come from two files:
        # reusing the pool's objects would let every dict lookup succeed on identity, without
        # reading either string (measured ~15% faster for the engine, and not what users run).
        ranked = [_copy(docs[i]) for i in chosen] + [f"u{q}-{i}" for i in range(DEPTH - JUDGED_IN_RUN)]
        columns = np.concatenate([chosen, np.arange(POOL_SIZE, POOL_SIZE + DEPTH - JUDGED_IN_RUN)])
        # Distinct scores (a permutation plus noise): no tie policy changes any number here.
        scores = np.round(rng.permutation(DEPTH) + rng.random(DEPTH), 6)
        order = np.argsort(-scores)
        run[query] = {ranked[i]: float(scores[i]) for i in order}
        y_true[q, :POOL_SIZE] = grades
        y_score[q, columns] = scores
    return qrels, run, y_true, y_score


def write_trec(
    directory: Path, qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> tuple[Path, Path]:
    qrels_path, run_path = directory / "qrels.txt", directory / "run.txt"
    with open(qrels_path, "w") as out:
        for query, docs in qrels.items():
            out.writelines(f"{query} 0 {doc} {grade}\n" for doc, grade in docs.items())
    with open(run_path, "w") as out:
        for query, ranked in run.items():
            out.writelines(
                f"{query} Q0 {doc} {rank} {score!r} bench\n"
                for rank, (doc, score) in enumerate(ranked.items(), start=1)
            )
    return qrels_path, run_path


@dataclass
class Timing:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # this process plus the children it waited for

    def measure(self, function: Callable[[], object]) -> None:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu, wall = time.process_time(), time.perf_counter()
        function()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.wall.append(wall)
        self.cpu.append(cpu + (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime))


def timed(functions: dict[str, Callable[[], object]], repeats: int) -> dict[str, Timing]:
    """Run the contenders in turn, `repeats` rounds, so background load hits them alike."""
    timings = {name: Timing() for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            timings[name].measure(function)
    return timings


def run_quietly(args: list[str]) -> str:
    done = subprocess.run(
        args, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    return done.stderr


def main() -> None:
    started = time.perf_counter()
    print(
        f"data: {QUERIES} queries x {POOL_SIZE}-document pools x {DEPTH}-deep scored runs, NDCG@{K}, seed "
        f"{SEED}"
    )
    qrels, run_dict, y_true, y_score = generate()
    pool = Pool(qrels)
    run = Run.from_scores(run_dict, name="bench")
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{K}"})

    # The contenders must agree before their times mean anything.
    ours = evaluate_run(pool, run, SETTINGS)
    theirs = evaluator.evaluate(run_dict)
    trec = np.array([theirs[q][f"ndcg_cut_{K}"] for q in ours.query_ids])
    sk = ndcg_score(y_true, y_score, k=K)
    assert np.abs(ours.ndcg - trec).max() < 1e-9, "engine and pytrec_eval disagree"
    assert abs(ours.mean - sk) < 1e-9, "engine and scikit-learn disagree"  # type: ignore[operator]
    print(
        f"agreement: max |engine - pytrec_eval| per query = {np.abs(ours.ndcg - trec).max():.1e}, "
        f"|mean - scikit-learn| = {abs(ours.mean - sk):.1e}"
    )  # type: ignore[operator]

    rows = timed(
        {
            ENGINE: lambda: evaluate_run(pool, run, SETTINGS),
            PYTREC: lambda: evaluator.evaluate(run_dict),
            WORDS: lambda: encode_ids(run._docs),
            FROM_DICT: lambda: evaluate_run(pool, Run.from_scores(run_dict, name="bench"), SETTINGS),
            ENGINE_BUILD: lambda: evaluate_run(Pool(qrels), run, SETTINGS),
            PYTREC_BUILD: lambda: pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{K}"}).evaluate(run_dict),
        },
        7,
    )
    rows |= timed({SKLEARN: lambda: ndcg_score(y_true, y_score, k=K)}, 3)

    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = write_trec(Path(tmp), qrels, run_dict)
        script = Path(tmp) / "pytrec_pipeline.py"
        script.write_text(PYTREC_PIPELINE)
        command = [sys.executable, "manage.py", "evaluate", str(qrels_path), str(run_path)]
        command += ["--k", str(K), "--unjudged", "zero", "--ties", "docid-desc"]
        inner: list[float] = []
        rows |= timed(
            {
                COMMAND: lambda: run_quietly(command),
                SCRIPT: lambda: inner.append(
                    float(run_quietly([sys.executable, str(script), str(qrels_path), str(run_path)]))
                ),
            },
            5,
        )
    wall = {name: statistics.median(t.wall) for name, t in rows.items()}
    cpu = {name: statistics.median(t.cpu) for name, t in rows.items()}
    wall[PIPELINE] = statistics.median(inner)  # measured inside the script: wall time only

    width = max(map(len, wall))
    print(f"\n{'median of the repeats':<{width}}  wall s   CPU s")
    for name, seconds in wall.items():
        print(f"{name:<{width}}  {seconds:6.3f}  " + (f"{cpu[name]:6.3f}" if name in cpu else "     -"))
    print("\nwhat each timing contains")
    for name in wall:
        print(f"  {name}: {CONTAINS[name]}")
    print("\nratios of wall time (CPU time in brackets); above 1: the engine or the command is faster")
    label_width = max(len(label) for label, _, _ in RATIOS)
    for label, slower, faster in RATIOS:
        cpu_ratio = f"  ({cpu[slower] / cpu[faster]:.2f}x)" if slower in cpu else ""
        print(f"  {label:<{label_width}}  {wall[slower] / wall[faster]:6.2f}x{cpu_ratio}")
    ratio = wall[PYTREC] / wall[ENGINE]
    verdict = "met" if ratio >= TARGET else "NOT met"
    print(f"\ntarget: engine >= {TARGET:.0f}x faster than pytrec_eval's evaluate: {verdict} ({ratio:.1f}x)")
    print(f"\n(benchmark took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
