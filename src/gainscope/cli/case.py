"""``gainscope case``: score Quepid-style cases (``score``), compare two of them (``compare``), convert from and
to Quepid, RRE, ``_rank_eval`` and TREC files (``import``, ``export``), and print a built-in scorer as Quepid
JavaScript (``scorer-js``). See :mod:`gainscope.cases`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from gainscope.cli.common import Number, guarded, rating_scale, with_options
from gainscope.cli.compare import settings_from, statistics_options
from gainscope.cli.spelling import Respelled

__all__ = ["case_group"]

_FORMATS = click.Choice(["table", "json"])


def scorer_options(fn: Any) -> Any:
    """How a case is scored: the scorer, the scale, the case-score conventions and the JavaScript sandbox."""
    options = [
        click.option("--scorer", "scorer_spec", default=None,
                     help="A built-in: Quepid's nDCG@10, NDCG_CUT@10, AP@10, P@10, RR@10, ERR@10, CG@10, DCG@10, "
                          "avgRating100@10, editDistanceFromBest@10, default@10 (v1@10), blogNDCG@10, or any metric "
                          "name as in evaluate -m, under the quepid profile; a Quepid JavaScript file (FILE.js) or a "
                          "Python scorer (module:function). Default: the case's."),
        click.option("--scale", default=None,
                     help="Rating scale: binary, graded, LO-HI (1-10) or a comma list (0,1,2,3). Default: the "
                          "case's, else the scorer's."),
        click.option("--unscored", type=click.Choice(["quepid", "skip", "zero"]), default="quepid",
                     show_default=True,
                     help="Zero-result and unrated queries. quepid: as Quepid's browser, the scorer runs on every "
                          "query and only a null score makes a query zsr / -- (left out of the case score); "
                          "skip: they are not scored and left out; zero: they are not scored and count as 0."),
        click.option("--undefined", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
                     help="Queries whose scorer gave no number (NaN, undefined, null on a query with results "
                          "and ratings): 0 in the case score as in Quepid, or left out."),
        click.option("--edit-distance", type=click.Choice(["quepid", "levenshtein", "quepid-legacy"]), default=None,
                     help="editDistanceFromBest, in the built-ins and JavaScript scorers alike: quepid (Quepid's "
                          "shipped distance, the default, so that scores are Quepid's) or levenshtein (the true "
                          "Levenshtein distance; for a built-in the same as naming "
                          "default(distance=levenshtein)@10). quepid-legacy is the older spelling of quepid."),
        click.option("--allow-unrated", is_flag=True,
                     help="Score even when no returned document of any query is rated (for a scorer that reads no "
                          "ratings); otherwise that is an error, never a table of zeros."),
        click.option("--js-time-limit", type=Number(min=0.001), default=1.0, show_default=True,
                     help="Seconds a JavaScript scorer may run per query."),
        click.option("--js-memory-limit", type=click.IntRange(min=8), default=128, show_default=True,
                     help="MiB of heap a JavaScript scorer may use."),
    ]
    return with_options(fn, options)


def _scorer(spec: str | None, case: Any, kwargs: dict[str, Any]) -> Any:
    from gainscope.cases.custom import resolve_scorer
    from gainscope.errors import InputError

    js = {"time_limit": kwargs["js_time_limit"], "memory_limit": kwargs["js_memory_limit"] * 1024 * 1024}
    if spec is not None:
        return resolve_scorer(spec, edit_distance=kwargs["edit_distance"], **js)
    if case.scorer is None:
        raise InputError(f"{case.source}: the case names no scorer; give --scorer (for example --scorer nDCG@10)")
    return resolve_scorer(case.scorer, base=case.source, allow_python=False, edit_distance=kwargs["edit_distance"],
                          **js)


def _score_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {"scale": rating_scale(kwargs["scale"]), "unscored": kwargs["unscored"], "undefined": kwargs["undefined"],
            "allow_unrated": kwargs["allow_unrated"]}


@click.group("case")
def case_group() -> None:
    """Quepid-style cases: queries with ratings and result lists, scored like Quepid scores them."""


@case_group.command("score")
@click.argument("case_file", metavar="CASE", type=click.Path(exists=True, dir_okay=False))
@scorer_options
@click.option("-f", "--format", "fmt", type=_FORMATS, default="table", show_default=True, help="Output format.")
@click.option("--show-logs", is_flag=True, help="Also print what JavaScript scorers wrote with console.log.")
@guarded
def score_cmd(case_file: str, scorer_spec: str | None, fmt: str, show_logs: bool, **kwargs: Any) -> None:
    """Score every query of CASE and the case (the mean over queries as Quepid's browser computes it, or by
    the rule --unscored names), with the conventions used."""
    from gainscope.cases.files import read_case
    from gainscope.cases.scoring import score_case
    from gainscope.render.cases import render_case_score

    case = read_case(case_file)
    result = score_case(case, _scorer(scorer_spec, case, kwargs), **_score_options(kwargs))
    click.echo(render_case_score(result, fmt, logs=show_logs), nl=False)


@case_group.command("compare")
@click.argument("cases", metavar="CASE...", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--snapshot", "snapshots", multiple=True, metavar="STORE[:NAME]",
              help="A snapshot recorded by case run or search (a snapshot store, and the snapshot's name when it "
                   "holds several), scored with the --ratings case's ratings; repeatable.")
@click.option("--ratings", "ratings_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Score every snapshot with this case's ratings (as Quepid scores old snapshots with today's "
                   "ratings). Default: each case file its own, store snapshots the first case's.")
@scorer_options
@click.option("--top", "k", cls=Respelled, old=("-k", "--depth"), type=click.IntRange(min=1), default=None,
              help="The first N results of each query, for documents moving in or out (default: the scorer's k, "
                   "else 10).")
@click.option("-f", "--format", "fmt", type=_FORMATS, default="table", show_default=True, help="Output format.")
@statistics_options
@guarded
def compare_cmd(cases: tuple[str, ...], snapshots: tuple[str, ...], ratings_file: str | None,
                scorer_spec: str | None, k: int | None, fmt: str, **kwargs: Any) -> None:
    """Compare snapshots of a case query by query: case files (each a snapshot: its results and its ratings)
    and --snapshot STORE:NAME (recorded runs). The first is the baseline; for each query every snapshot's score,
    its change, the documents that entered or left the top k, and paired tests of the per-query scores against
    the baseline, corrected over all comparisons. Two case files alone give the classic A/B table, then the tests.
    Without --scorer each case file uses its own."""
    from gainscope.cases.compare import compare_cases
    from gainscope.cases.files import read_case
    from gainscope.cases.snapshots import compare_snapshots
    from gainscope.render.cases import render_comparison, render_snapshots

    settings = settings_from(kwargs)
    if len(cases) + len(snapshots) < 2:
        raise click.UsageError("give at least two snapshots: case files and/or --snapshot STORE:NAME")
    read = [read_case(c) for c in cases]
    ratings = read_case(ratings_file) if ratings_file is not None else None
    if ratings is not None:
        from gainscope.cases.live import with_ratings

        read = [with_ratings(c, ratings) for c in read]
    if snapshots:
        from gainscope.cases.live import case_from_snapshot

        base = ratings or (read[0] if read else None)
        if base is None:
            raise click.UsageError("snapshots from a store need ratings: give --ratings CASE (or a case file first)")
        read += [case_from_snapshot(base, results, name=name) for name, results in _store_snapshots(snapshots)]
    options = _score_options(kwargs)
    scorer = _scorer(scorer_spec, read[0] if ratings is None else ratings, kwargs)
    if len(read) == 2 and not snapshots and ratings is None:
        scorer_b = scorer if scorer_spec is not None else _scorer(None, read[1], kwargs)
        cmp = compare_cases(read[0], read[1], scorer, scorer_b, k=k, **options)
        tests = compare_snapshots(read, scorer, k=k, settings=settings, **options)
        if fmt == "json":
            data = {**cmp.to_dict(), "significance": tests.comparison.to_dict()}
            click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
            return
        from gainscope.render.compare import render_comparison as render_tests

        click.echo(render_comparison(cmp, fmt), nl=False)
        if getattr(scorer_b, "name", None) != getattr(scorer, "name", None):
            click.echo(f"note: the cases name different scorers; the tests compare both scored with A's "
                       f"({scorer.name}); give --scorer to choose one", err=True)
        click.echo("significance of the per-query differences (B against A):")
        click.echo(render_tests(tests.comparison, "table"), nl=False)
        return
    result = compare_snapshots(read, scorer, k=k, settings=settings, **options)
    click.echo(render_snapshots(result, fmt), nl=False)


def _store_snapshots(specs: tuple[str, ...]) -> list[tuple[str, Any]]:
    """``(name, results)`` of each ``STORE[:NAME]``."""
    from gainscope.errors import InputError
    from gainscope.search.store import SnapshotStore

    out = []
    for spec in specs:
        path, name = spec, None
        if not Path(spec).exists() and ":" in spec:
            path, _, name = spec.rpartition(":")
        with SnapshotStore.open(path, readonly=True) as store:
            if name is None:
                held = store.snapshots()
                if len(held) != 1:
                    listed = ", ".join(s.name for s in held) or "none"
                    raise InputError(f"{path} holds {len(held)} snapshots ({listed}); pick one: --snapshot "
                                     f"{path}:NAME")
                name = held[0].name
            snapshot = store.get(name)
            out.append((snapshot.name, store.results(snapshot, responses=False)))
    return out


@case_group.command("import")
@click.option("--quepid-snapshot", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Quepid snapshot CSV (results; ratings too in the basic export).")
@click.option("--quepid-ratings", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Quepid ratings CSV (query,docid,rating).")
@click.option("--rre", type=click.Path(exists=True, dir_okay=False), default=None, help="RRE ratings JSON.")
@click.option("--rank-eval", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Elasticsearch/OpenSearch _rank_eval request JSON (ratings).")
@click.option("--rank-eval-response", type=click.Path(exists=True, dir_okay=False), default=None,
              help="_rank_eval response JSON (results).")
@click.option("--run", "run_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Results from a run file gainscope reads (TREC, JSON, CSV...), for RRE or _rank_eval ratings; "
                   "run query ids match a query's id, else its text with spaces as _ (as 'case export --run' "
                   "writes them), or its exact text.")
@click.option("--scale", default=None, help="Rating scale to record in the case.")
@click.option("--scorer", "scorer_spec", default=None, help="Scorer to record in the case (a name or FILE.js).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the case here (.json, or .yaml with PyYAML); default: standard output as JSON.")
@guarded
def import_cmd(quepid_snapshot: str | None, quepid_ratings: str | None, rre: str | None, rank_eval: str | None,
               rank_eval_response: str | None, run_file: str | None, scale: str | None, scorer_spec: str | None,
               output: Path | None) -> None:
    """Build a case file from Quepid, RRE or _rank_eval exports."""
    from gainscope.cases.files import write_case
    from gainscope.cases.quepid_csv import case_from_quepid
    from gainscope.cases.rank_eval import read_rank_eval
    from gainscope.cases.rre import read_rre

    groups = [bool(quepid_snapshot or quepid_ratings), bool(rre), bool(rank_eval or rank_eval_response)]
    if sum(groups) != 1:
        raise click.UsageError("give one source: --quepid-snapshot/--quepid-ratings, --rre, or "
                               "--rank-eval/--rank-eval-response")
    sc = rating_scale(scale)
    if quepid_snapshot or quepid_ratings:
        case = case_from_quepid(quepid_snapshot, quepid_ratings, scale=sc, scorer=scorer_spec)
    elif rre:
        case = read_rre(rre, scale=sc, scorer=scorer_spec)
    else:
        case = read_rank_eval(rank_eval, response=rank_eval_response, scale=sc, scorer=scorer_spec)
    warnings: list[str] = []
    if run_file is not None:
        from gainscope.cases.trec import with_run_results
        from gainscope.errors import format_ids
        from gainscope.io import read_run

        ranked: dict[str, list[str]] = {}
        for qid, docs in read_run(run_file).to_dict().items():
            ranked[qid] = [d for d, _ in sorted(docs.items(), key=lambda item: -item[1])]
        match = with_run_results(case, ranked)
        case = match.case
        if match.unmatched:
            n = len(match.unmatched)
            warnings.append(f"{n} run query id{'s' if n > 1 else ''} match{'' if n > 1 else 'es'} no case query "
                            f"(their results are left out): {format_ids(list(match.unmatched))}")
        if match.missing:
            n = len(match.missing)
            warnings.append(f"{n} case quer{'ies have' if n > 1 else 'y has'} no results in the run: "
                            f"{format_ids(list(match.missing))}")
    for note in case.notes:
        click.echo(f"note: {note}", err=True)
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    text = write_case(case, output)
    if output is None:
        click.echo(text, nl=False)


@case_group.command("export")
@click.argument("case_file", metavar="CASE", type=click.Path(exists=True, dir_okay=False))
@click.option("--qrels", type=click.Path(dir_okay=False, path_type=Path), default=None, help="TREC qrels file.")
@click.option("--run", "run_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="TREC run file (the results, rank order kept).")
@click.option("--tag", default="case", show_default=True, help="Run tag of the TREC run.")
@click.option("--quepid-ratings", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Quepid ratings CSV (importable into Quepid).")
@click.option("--scorer", "scorer_spec", default=None,
              help="The built-in scorer of the evaluate command line printed with --qrels and --run (default: the "
                   "case's).")
@click.option("--scale", default=None,
              help="The rating scale the case is scored on, for that command line (default: the case's, else the "
                   "scorer's).")
@click.option("--edit-distance", type=click.Choice(["quepid", "levenshtein", "quepid-legacy"]), default=None,
              help="As in case score, for that command line.")
@guarded
def export_cmd(case_file: str, qrels: Path | None, run_out: Path | None, tag: str, quepid_ratings: Path | None,
               scorer_spec: str | None, scale: str | None, edit_distance: str | None) -> None:
    """Write CASE as TREC qrels and run (for gainscope evaluate) and/or as Quepid's ratings CSV. With --qrels and
    --run, print the gainscope evaluate command line that gives, query by query, the numbers case score gives
    with the case's built-in scorer (or --scorer)."""
    from gainscope.cases.files import read_case
    from gainscope.cases.quepid_csv import write_quepid_ratings
    from gainscope.cases.trec import write_trec_qrels, write_trec_run

    if qrels is None and run_out is None and quepid_ratings is None:
        raise click.UsageError("nothing to write: give --qrels, --run and/or --quepid-ratings")
    from gainscope.io.writers import write_file

    case = read_case(case_file)
    if qrels is not None:
        write_file(qrels, write_trec_qrels(case))
    if run_out is not None:
        write_file(run_out, write_trec_run(case, tag))
    if quepid_ratings is not None:
        write_file(quepid_ratings, write_quepid_ratings(case))
    if qrels is not None and run_out is not None:
        _print_evaluate_command(case, qrels, run_out, scorer_spec, rating_scale(scale), edit_distance)


def _print_evaluate_command(case: Any, qrels: Path, run: Path, scorer_spec: str | None, scale: Any,
                            edit_distance: str | None) -> None:
    """The evaluate command line that reproduces ``case score``'s per-query numbers on the exported files (on
    standard output), and what it leaves to case score (on standard error)."""
    from gainscope.cases.custom import resolve_scorer
    from gainscope.cases.scorers import BuiltinScorer
    from gainscope.cases.trec import evaluate_command

    spec = scorer_spec if scorer_spec is not None else case.scorer
    if spec is None:
        click.echo("note: the case names no scorer: give --scorer NAME to get the gainscope evaluate command line "
                   "that gives case score's numbers", err=True)
        return
    from_case = scorer_spec is None
    scorer = resolve_scorer(spec, base=case.source if from_case else None, allow_python=not from_case,
                            edit_distance=edit_distance)
    if not isinstance(scorer, BuiltinScorer):
        click.echo(f"note: {scorer.name} is not a built-in scorer (a metric), so gainscope evaluate cannot compute "
                   "it", err=True)
        return
    command, notes = evaluate_command(case, scorer, str(qrels), str(run), scale=scale)
    click.echo(command)
    for note in notes:
        click.echo(f"note: {note}", err=True)


@case_group.command("scorer-js")
@click.argument("name")
@guarded
def scorer_js_cmd(name: str) -> None:
    """Print one of Quepid's built-in scorers (e.g. NDCG_CUT@5) as Quepid JavaScript, to paste into Quepid."""
    from gainscope.cases.builtin_js import builtin_source
    from gainscope.cases.scorers import BuiltinScorer, builtin_scorer

    scorer = builtin_scorer(name)
    click.echo(builtin_source(scorer), nl=False)
    definition = scorer.definition
    if definition is not None and definition.takes_edit_distance and scorer.edit_distance != "quepid-legacy":
        quepid = BuiltinScorer(definition, scorer.k, "quepid")
        click.echo(f"warning: in Quepid, editDistanceFromBest() is Quepid's shipped edit distance, so this script "
                   f"gives {quepid.name}'s numbers there, not {scorer.name}'s (true Levenshtein); so it does in "
                   f"gainscope unless run with --edit-distance levenshtein", err=True)


def _register_live() -> None:
    """``case run`` lives in :mod:`gainscope.cli.case_live` (the live half: engines and snapshots), ``case add``
    (a case into a dashboard workspace) in :mod:`gainscope.cli.serve`."""
    from gainscope.cli.case_live import run_cmd
    from gainscope.cli.serve import case_add_cmd

    case_group.add_command(run_cmd)
    case_group.add_command(case_add_cmd)


_register_live()
