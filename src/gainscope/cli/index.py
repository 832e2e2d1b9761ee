"""``gainscope index``: build the embedded search engine's index from a corpus (see
:mod:`gainscope.search.embedded`)."""

from __future__ import annotations

import click

from gainscope.cli.common import Number, guarded

__all__ = ["index_cmd"]


@click.command("index")
@click.argument("corpus", type=click.Path(exists=True))
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False),
              help="The folder to write the index into.")
@click.option("--fields", default=None,
              help="Fields to index and their default boosts, e.g. title^2,text (default: every text field of the "
                   "first document, boost 1). Boosts are knobs: --set title_boost=3 at search time.")
@click.option("--id-field", default=None, help="The id field of JSONL records (default: _id, id, doc_id, docid or "
                                               "pid, the first present).")
@click.option("--k1", type=Number(), default=1.2, show_default=True, help="BM25 k1 (a knob: --set k1=0.9 later).")
@click.option("--b", "b", type=Number(), default=0.75, show_default=True, help="BM25 b (a knob: --set b=0.4 later).")
@click.option("--method", type=click.Choice(["lucene", "robertson", "atire", "bm25l", "bm25+"]), default="lucene",
              show_default=True, help="BM25 variant (bm25s's names).")
@click.option("--stopwords", type=click.Choice(["none", "en"]), default="none", show_default=True,
              help="Leave English stop words out of the index and of queries.")
@click.option("--overwrite", is_flag=True, help="Replace an index already in --index.")
@guarded
def index_cmd(corpus: str, index_dir: str, fields: str | None, id_field: str | None, k1: float, b: float,
              method: str, stopwords: str, overwrite: bool) -> None:
    """Index CORPUS (a BEIR corpus.jsonl or folder, JSONL with an id field, or TSV id<TAB>text) for BM25 search:
    gainscope search --engine INDEX_DIR."""
    import time

    from gainscope.search.embedded import build_index

    started = time.perf_counter()
    info = build_index(corpus, index_dir, fields=fields, id_field=id_field, k1=k1, b=b, method=method,
                       stopwords=None if stopwords == "none" else stopwords, overwrite=overwrite)
    seconds = time.perf_counter() - started
    boosts = ",".join(f"{name}^{boost:g}" for name, boost in info.fields.items())
    click.echo(f"indexed {info.documents} documents from {corpus} into {index_dir} in {seconds:.1f} s "
               f"({info.documents / seconds:,.0f} documents/s); fields {boosts}, k1 {info.k1:g}, b {info.b:g}, "
               f"{info.method}; search it with: gainscope search --engine {index_dir} --queries QUERIES")
