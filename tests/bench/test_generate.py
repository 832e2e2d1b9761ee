"""The benchmark's synthetic data has the properties the speed issue asks for (checked on size S)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[2]


def _generate_module():
    spec = importlib.util.spec_from_file_location("bench_generate", ROOT / "bench" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_small_size_has_judgments_grades_ties_and_is_reproducible(tmp_path: Path) -> None:
    gen = _generate_module()
    qrels, run = gen.generate("S", tmp_path)
    q = pl.read_csv(qrels, separator=" ", has_header=False, new_columns=["q", "it", "doc", "grade"],
                    schema_overrides={"q": pl.String, "doc": pl.String})
    r = pl.read_csv(run, separator=" ", has_header=False, new_columns=["q", "q0", "doc", "rank", "score", "tag"],
                    schema_overrides={"q": pl.String, "doc": pl.String})
    assert r.height == 1_000 * 100 and r["q"].n_unique() == 1_000
    per_query = q.group_by("q").len()["len"]
    assert 40 <= per_query.mean() <= 60  # about 50 judged documents per query
    every_grade = q.group_by("q").agg(pl.col("grade").n_unique().alias("n"))["n"]
    assert every_grade.min() == 5  # grades 0..4 present in every query
    assert r.select(pl.struct("q", "doc").is_duplicated().any()).item() is False
    ties = r.group_by("q", "score").len().filter(pl.col("len") > 1).height
    assert ties > 100  # tied scores occur
    # sorted by score within each query, ranks 1..100
    assert r.group_by("q", maintain_order=True).agg(pl.col("score").diff().max())["score"].max() <= 0
    again = gen.generate("S", tmp_path / "again")
    assert again[1].read_bytes() == run.read_bytes() and again[0].read_bytes() == qrels.read_bytes()
