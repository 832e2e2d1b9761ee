"""gainscope.spark on a local[2] Spark: the local engine's numbers, warnings and errors, from DataFrames,
Parquet and TREC text, and the command line (``--backend spark``).

The property that makes the numbers identical is tested without Spark in test_partitioned.py; these tests
check the plumbing: reading, partitioning, locating problems, assembling.
"""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from tests.helpers import outcome

import gainscope
from gainscope.errors import DuplicateError, FormatError, GainscopeError, InputError, PolicyError
from gainscope.metrics.trec_eval import trec_metrics
from gainscope.results import Results

ALL_TREC = [m for _, m in trec_metrics(["all_trec"])]


def write_data(folder: Path, seed: int = 7) -> tuple[Path, Path, pl.DataFrame]:
    """Judgments (graded, negative and zero grades; some judged queries the run does not rank) and a TREC run
    (ties, unjudged documents, queries without judgments, lines of a query not sorted by score)."""
    rnd = random.Random(seed)
    qrels, rows = [], []
    for q in range(40):
        qid = f"q{q:02d}"
        docs = [f"d{d}" for d in rnd.sample(range(60), 25)]
        if q % 7 != 3:
            for d in docs[:15]:
                qrels.append(f"{qid} 0 {d} {rnd.choice([-1, 0, 0, 1, 1, 2, 3])}")
        if q % 9 == 4:
            continue  # judged, never ranked
        scores = [rnd.choice([1.0, 2.0, 2.5, 3.0, 0.5]) for _ in docs]
        rows += [(qid, d, s) for d, s in zip(docs, scores, strict=True)]
    rnd.shuffle(rows)
    rows.sort(key=lambda r: r[0])  # grouped by query, not ordered by score inside
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    lines = [f"{q} Q0 {d} {i % 25 + 1} {s} sys" for i, (q, d, s) in enumerate(rows)]
    (folder / "run.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64},
                         orient="row")
    return folder / "qrels.txt", folder / "run.txt", frame


def same(a: Results, b: Results) -> None:
    assert a.query_ids == b.query_ids
    assert a.metric_names == b.metric_names
    assert a.values.tobytes() == b.values.tobytes()  # bit for bit
    assert np.array_equal(a.undefined, b.undefined)
    assert a.aggregates == b.aggregates
    assert a.coverage == b.coverage
    assert a.notes == b.notes
    assert a.run_name == b.run_name


POLICIES = [  # every policy away from its default at least once (test_partitioned.py covers the combinations)
    {},
    {"missing_queries": "skip", "depth": 7, "judged_only": True, "relevance_level": 2},
    {"ties": "rank", "negative_grades": "nonrelevant", "undefined": "skip"},
    {"ties": "average", "depth": 9, "judged_grades": "truncated", "max_grade": 5.0, "score_precision": "float32"},
]


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default")
def test_text_run_all_trec_equals_local_engine(spark: Any, tmp_path: Path, policy: dict[str, Any]) -> None:
    qrels, run, _ = write_data(tmp_path)
    mets = [m for m in ALL_TREC if _allows(m, gainscope.Policies(**policy))]
    local, local_warnings = outcome(lambda: gainscope.evaluate(str(qrels), str(run), mets, **policy))
    remote, remote_warnings = outcome(lambda: gainscope.spark.evaluate(str(qrels), str(run), mets, spark=spark,
                                                                       **policy))
    assert isinstance(local, Results), local
    assert isinstance(remote, gainscope.spark.SparkEvaluation), remote
    same(remote.results, local)
    assert remote_warnings == local_warnings


def test_profiles_give_the_local_engines_numbers(spark: Any, tmp_path: Path) -> None:
    # a profile sets policies and metric parameters (gain, ideal, ...): the names are resolved under it on the
    # driver, the partitions run the resolved metrics, the results echo the profile
    from gainscope.metrics.profiles import PROFILES

    qrels, run, _ = write_data(tmp_path)
    for profile in PROFILES:
        names = ["nDCG@10", "P@10", "R@20", "DCG@5"] + ([] if profile == "sklearn" else ["AP", "RR", "ERR@20"])
        local, local_warnings = outcome(lambda: gainscope.evaluate(str(qrels), str(run), names,  # noqa: B023
                                                                   profile=profile))  # noqa: B023
        remote, remote_warnings = outcome(lambda: gainscope.spark.evaluate(
            str(qrels), str(run), names, spark=spark, profile=profile))  # noqa: B023
        assert isinstance(local, Results), (profile, local)
        same(remote.results, local)
        assert remote.results.profile == local.profile and local.profile is not None
        assert remote.results.policies == local.policies
        assert remote_warnings == local_warnings, profile


def _allows(metric: Any, policies: gainscope.Policies) -> bool:
    try:
        metric.check_policies(policies)
    except GainscopeError:
        return False
    return True


def test_parquet_and_dataframe_runs_and_several_runs_share_the_judgments(spark: Any, tmp_path: Path) -> None:
    qrels, _, frame = write_data(tmp_path, seed=11)
    parquet = tmp_path / "run.parquet"
    frame.rename({"query_id": "qid", "doc_id": "docno"}).write_parquet(parquet)  # aliases, as the readers take
    mets = ["nDCG@10", "AP", "RR", "P@5", "ERR@20", "bpref"]
    local, local_warnings = outcome(lambda: gainscope.evaluate_runs(str(qrels), [str(parquet), frame], mets))
    df = spark.createDataFrame(frame.to_arrow())
    (parquet_ev, frame_ev), remote_warnings = outcome(
        lambda: gainscope.spark.evaluate_runs(str(qrels), [str(parquet), df], mets, spark=spark))
    assert remote_warnings == local_warnings
    same(parquet_ev.results, local[0])
    same(frame_ev.results, local[1])
    assert parquet_ev.run_name == "run" and frame_ev.run_name == "run"
    long = frame_ev.per_query().where("metric = 'AP'").orderBy("query_id").collect()
    assert [r["value"] for r in long] == local[1].values[:, 1].tolist()
    assert frame_ev.per_query(wide=True).count() == len(local[1].query_ids)


def test_compare_on_spark_is_the_local_comparison(spark: Any, tmp_path: Path) -> None:
    qrels, run, frame = write_data(tmp_path, seed=3)
    other = tmp_path / "other.parquet"
    frame.with_columns(pl.col("score") * -1).write_parquet(other)
    local, _ = outcome(lambda: gainscope.compare(str(qrels), [str(run), str(other)], ["AP", "nDCG@10"]))
    remote, _ = outcome(lambda: gainscope.spark.compare(str(qrels), [str(run), str(other)], ["AP", "nDCG@10"],
                                                        spark=spark))
    assert remote.to_json() == local.to_json()


# ---------------------------------------------------------------------- problems, located
def test_a_bad_line_is_named_by_file_and_line_across_blocks(spark: Any, tmp_path: Path) -> None:
    # small blocks: the bad line is far from its block's start; the line number is the file's
    qrels, run, _ = write_data(tmp_path)
    lines = run.read_text(encoding="utf-8").splitlines()
    lines[500] = "q27 Q0 d1 3 0.5"  # five columns
    lines[600] = "q30 Q0 d9 x 0.5 sys"  # a later value problem: columns are checked first, as the reader does
    run.write_text("# a comment\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    try:
        local, _ = outcome(lambda: gainscope.evaluate(str(qrels), str(run), ["AP"]))
        remote, _ = outcome(lambda: gainscope.spark.evaluate(str(qrels), str(run), ["AP"], spark=spark))
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert local[0] is FormatError
    assert local[1].startswith(f"{run}:503: expected 6 whitespace-separated columns")
    assert remote == local


def test_bad_values_duplicates_and_encoding_are_the_readers_errors(spark: Any, tmp_path: Path) -> None:
    qrels, run, _ = write_data(tmp_path)
    good = run.read_text(encoding="utf-8").splitlines()
    cases = {
        "score": [*good[:50], "q01 Q0 dX 1 0,5 sys", *good[50:]],
        "duplicate": [*good[:30], good[3], *good[30:], good[200]],
        "encoding": [*good[:10], "q00 Q0 d\udcff 1 1 sys", *good[10:]],
        "header": ["qid Q0 docno rank score run", *good],
        # detected as MS MARCO from its first lines; a query comes back on line 101 (past Spark's look at the head)
        "msmarco": [f"q{i // 10:02d} d{i} {i % 10 + 1}" for i in range(100)] + ["q00 d999 11"],
    }
    for case, lines in cases.items():
        path = tmp_path / f"{case}.txt"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
        local, _ = outcome(lambda: gainscope.evaluate(str(qrels), str(path), ["AP"]))  # noqa: B023
        remote, _ = outcome(lambda: gainscope.spark.evaluate(str(qrels), str(path), ["AP"], spark=spark))  # noqa: B023
        assert isinstance(local, tuple) and issubclass(local[0], InputError), (case, local)
        assert remote == local, case
    assert outcome(lambda: gainscope.evaluate(str(qrels), str(tmp_path / "duplicate.txt"), ["AP"]))[0][0] \
        is DuplicateError


def test_parquet_problems_name_the_row(spark: Any, tmp_path: Path) -> None:
    qrels, _, frame = write_data(tmp_path)
    bad = tmp_path / "bad.parquet"
    frame.with_columns(pl.when(pl.int_range(pl.len()) == 77).then(None).otherwise(pl.col("doc_id"))
                       .alias("doc_id")).write_parquet(bad)
    local, _ = outcome(lambda: gainscope.evaluate(str(qrels), str(bad), ["AP"]))
    remote, _ = outcome(lambda: gainscope.spark.evaluate(str(qrels), str(bad), ["AP"], spark=spark))
    assert local[0] is FormatError and f"{bad}: row 78: missing doc id" in local[1]
    assert remote == local


def test_inputs_the_backend_refuses_say_what_to_do(spark: Any, tmp_path: Path) -> None:
    qrels, run, _ = write_data(tmp_path)
    warnings.simplefilter("ignore", gainscope.errors.QueryCoverageWarning)
    with pytest.raises(PolicyError, match=r"^normalize_ids='NFC' is not supported by the Spark backend"):
        gainscope.spark.evaluate(str(qrels), str(run), ["AP"], spark=spark, normalize_ids="NFC")
    with pytest.raises(PolicyError, match=f"^{re.escape(str(run))}: the Spark backend reads text runs as UTF-8, "
                                          "not latin-1"):
        gainscope.spark.evaluate(str(qrels), str(run), ["AP"], spark=spark, encoding="latin-1")
    with pytest.raises(InputError, match="no such file: "):
        gainscope.spark.evaluate(str(qrels), str(tmp_path / "nothing.txt"), ["AP"], spark=spark)
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"this is csv: read it with spark.read.csv\(path, header=True\)"):
        gainscope.spark.evaluate(str(qrels), str(tmp_path / "run.csv"), ["AP"], spark=spark)


# ---------------------------------------------------------------------- the command line
def test_cli_backend_spark_prints_what_the_local_backend_prints(spark: Any, cli_runner: Any, tmp_path: Path) -> None:
    qrels, run, frame = write_data(tmp_path)
    for args in (["-m", "all_trec", "-f", "trec_eval", "-q", "-c"],
                 ["-m", "all_trec", "-f", "trec_eval", "-J", "--trec-eval-version", "9", "--name", "mine"],
                 ["-m", "nDCG@10 AP", "-f", "json", "-M", "10", "--profile", "quepid"]):
        local = cli_runner("evaluate", str(qrels), str(run), *args)
        remote = cli_runner("evaluate", str(qrels), str(run), *args, "--backend", "spark", "--master", "local[2]",
                            "--spark-conf", "spark.sql.shuffle.partitions=2")
        assert local[0] == 0
        assert remote == local
    other = tmp_path / "other.parquet"
    frame.with_columns(pl.col("score") * -1).write_parquet(other)
    local = cli_runner("compare", str(qrels), str(run), str(other), "-m", "AP nDCG@10", "-f", "json")
    assert local[0] == 0 and cli_runner("compare", str(qrels), str(run), str(other), "-m", "AP nDCG@10", "-f", "json",
                                        "--backend", "spark") == local
    assert cli_runner("evaluate", str(qrels), str(run), "--master", "local[2]")[0] == 2
    code, _, err = cli_runner("evaluate", str(qrels), str(run), "--bounds", "--backend", "spark")
    assert code == 2 and "--bounds is computed by the local backend only; drop --backend spark or --bounds" in err
    code, _, err = cli_runner("evaluate", str(qrels), str(run), "--backend", "spark", "--spark-conf", "nokey")
    assert code == 2 and "expected KEY=VALUE; got 'nokey'" in err
    bad = tmp_path / "bad.txt"
    bad.write_text(run.read_text(encoding="utf-8") + "q01 Q0 d1 1\n", encoding="utf-8")
    local = cli_runner("evaluate", str(qrels), str(bad))
    remote = cli_runner("evaluate", str(qrels), str(bad), "--backend", "spark")
    assert local[0] == 3 and remote == local


def test_json_lines_runs_are_read_by_the_json_lines_rules(spark: Any, tmp_path: Path) -> None:
    qrels, _, frame = write_data(tmp_path, seed=5)
    ranked = frame.sort(["query_id", "score"], descending=[False, True]).group_by("query_id", maintain_order=True)
    path = tmp_path / "run.jsonl"
    import json

    path.write_text("".join(json.dumps({"qid": q, "retrieved_document_ids": docs}) + "\n"
                            for (q,), docs in ((k, g["doc_id"].to_list()) for k, g in ranked)), encoding="utf-8")
    local, local_warnings = outcome(lambda: gainscope.evaluate(str(qrels), str(path), ["AP", "nDCG@10", "RR"]))
    remote, remote_warnings = outcome(lambda: gainscope.spark.evaluate(str(qrels), str(path), ["AP", "nDCG@10", "RR"],
                                                                       spark=spark))
    same(remote.results, local)
    assert remote.run_name == "run" and remote_warnings == local_warnings
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(path.read_text(encoding="utf-8") + '{"qid": "q01", "doc_id": "zz", "score": 1}\n',
                     encoding="utf-8")
    local, _ = outcome(lambda: gainscope.evaluate(str(qrels), str(mixed), ["AP"]))
    remote, _ = outcome(lambda: gainscope.spark.evaluate(str(qrels), str(mixed), ["AP"], spark=spark))
    assert local[0] is FormatError and "scores are given here but missing on line 1" in local[1]
    assert remote == local
