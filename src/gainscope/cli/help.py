"""``gainscope help [TOPIC]``: what several commands share, written once (the commands' pages point here).

Topics: ``inputs`` (the reading options and the evaluation conventions every evaluating command takes) and
``vocabulary`` (what each option word means in every command, and the old spellings still accepted).
``gainscope help COMMAND`` is ``gainscope COMMAND --help``.
"""

from __future__ import annotations

import click

__all__ = ["TOPICS", "help_cmd", "vocabulary_text"]

INPUTS = """\
Inputs and conventions: the options evaluate, compare, gate, plot, report, explain and agreement share
(pool, fuse and validate take the reading options).

Judgments and runs
  Formats: TREC qrels and runs (spaces or tabs, CRLF, BOM, '#' comment lines, .gz), the evaluation dataset
  as JSON/JSONL, CSV/TSV with a header, BEIR qrels TSV, Parquet, MS MARCO 'qid pid rank' runs. The format is
  detected from the extension and the content; force it with --judgments-format (trec, qrels3, jsonl, json,
  csv, tsv, beir, parquet) or --run-format (trec, msmarco, jsonl, json, csv, tsv, parquet). A 3-column run is
  MS MARCO only when each query's third column is 1, 2, 3 ...; any other 3-column run is refused.
  '-' reads one input (the judgments or a run) from standard input, as trec_eval does.
  --encoding CODEC     text encoding of the input files (utf-8; latin-1, cp1252, utf-16 ...).
  --normalize-ids NFC  Unicode-normalise ids before matching (non-NFC ids are otherwise only warned about).
  --on-duplicate       a document repeated within a query of a run: error, first, max.
  --on-conflict        a document judged twice with different grades: error, max, min, first, last.
  --float-grades       accept fractional grades (kept as they are, never truncated).
  --nan-score          a NaN score: error, or a number that stands for it (-inf).
  --allow-empty        accept judgments or runs without an entry (a run that retrieved nothing scores 0).
  --extra-columns      columns after a TREC run's tag: error, or ignore as trec_eval does.
  Bad input is an error naming the file, the line and the fix; judgments and runs that share no query are an
  error, never a table of zeros.

Conventions (defaults: trec_eval's; every one is printed with the results)
  --ties trec_eval|rank|average  tied scores: doc id descending as trec_eval, the order given, or gains
                       averaged over the tie.
  -c/--complete, --skip-missing  a judged query the run has no ranking for: scored 0 (trec_eval -c, the
                       default), or left out.
  -l/--relevance-level N|positive  the lowest grade binary metrics count as relevant (trec_eval -l);
                       positive: any grade > 0 (Quepid).
  -M/--depth N         keep the first N documents of each ranking (trec_eval -M).
  -J/--judged-only     drop unjudged documents before scoring (trec_eval -J).
  --negative-grades    a negative grade: unjudged (trec_eval), or judged non-relevant.
  --undefined zero|skip  a value with no definition (no relevant document): 0 in the mean, or left out.
  --judged-grades as_is|truncated  the judged pool's grades (ideal rankings, R), or truncated as Quepid stores them.
  --max-grade G        the top of the grading scale, for ERR and avgRating100 (default: the largest judged grade).
  --trec-eval-version 10|9  the trec_eval whose numbers to give: 9 (and pytrec_eval) rounds scores to float32
                       before ordering and rounds recall levels of iprec_at_recall and 11pt_avg its own way.
  --profile NAME       another tool's conventions in one word (trec_eval, quepid, tempoeval, sklearn, ranx,
                       es_rank_eval); options given explicitly override it and the output says so.
                       gainscope metrics --profiles lists what each sets.

In Python the same options are keyword arguments of gainscope.evaluate and gainscope.io.read_run /
read_judgments (on_duplicate='first', encoding='latin-1', profile='quepid' ...).
"""

VOCABULARY = """\
One word, one meaning, in every command:
  --baseline NAME      the name of the baseline run (compare, plot, report, pool, experiment, temporal).
  --baseline-run FILE  gate: the baseline run's file.
  --name NAME          a run's name (one per run in order; the snapshot's or the fused run's name).
  --model MODEL        the LLM that grades (judge, temporal, agent).
  --judge HASH         store export: a stored judge, by its hash (gainscope store info).
  -o/--output FILE     the file to write instead of standard output; --output-dir DIR for a folder.
  -f/--format          the output format; --image-format png|svg for figures (plot, report).
  -M/--depth N         trec_eval's -M: the first N documents of each ranking are scored.
  --pool-depth N       judge, pool: the first N documents of each run are pooled.
  --top N              the first N results of each query (asked from an engine, or shown moving in case compare).
  -m/--metric          metric names, as gainscope metrics lists them.
  --store FILE         a judgment store (SQLite); --snapshot a snapshot store.
  --case ID            queue, serve --queue: a case of the dashboard's workspace, by its id.
"""

TOPICS: dict[str, tuple[str, str]] = {
    "inputs": ("formats, standard input, encodings, ids, ties, missing queries, relevance, profiles", INPUTS),
    "vocabulary": ("what each option word means in every command, and the old spellings still accepted",
                   VOCABULARY),
}


def vocabulary_text(root: click.Group) -> str:
    """:data:`VOCABULARY` with the old spellings the commands of ``root`` still accept, read from their
    declarations (:class:`~gainscope.cli.spelling.Respelled`)."""
    from gainscope.cli.spelling import Respelled

    ctx = click.Context(root)
    lines: list[str] = []

    def walk(group: click.Group, path: str) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if isinstance(command, click.Group):
                walk(command, f"{path} {name}".strip())
            elif command is not None:
                for p in command.params:
                    if isinstance(p, Respelled):
                        lines.append(f"  {f'{path} {name}'.strip()}: {', '.join(p.old)} -> {p.opts[-1]}")

    walk(root, "")
    return VOCABULARY + "\nOld spellings, still accepted with a warning on standard error:\n" + "\n".join(lines) + "\n"


@click.command("help")
@click.argument("topic", required=False)
@click.pass_context
def help_cmd(ctx: click.Context, topic: str | None) -> None:
    """Help topics: what several commands share, written once. Without TOPIC, the list; with a command's name,
    that command's help."""
    root = ctx.find_root().command
    assert isinstance(root, click.Group)
    if topic is None:
        width = max(len(name) for name in TOPICS)
        click.echo("Help topics (gainscope help TOPIC):")
        for name, (about, _) in TOPICS.items():
            click.echo(f"  {name:<{width}}  {about}")
        click.echo("Commands: gainscope COMMAND --help (or gainscope help COMMAND).")
        return
    if topic == "vocabulary":
        click.echo(vocabulary_text(root), nl=False)
        return
    if topic in TOPICS:
        click.echo(TOPICS[topic][1], nl=False)
        return
    command = root.get_command(ctx, topic)
    if command is None:
        raise click.UsageError(f"no help topic or command {topic!r}; topics: {', '.join(TOPICS)} (or a command "
                               f"name)", ctx)
    with click.Context(command, info_name=topic, parent=ctx.parent) as sub:
        click.echo(command.get_help(sub))
