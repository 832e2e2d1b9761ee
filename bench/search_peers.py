"""One BM25 engine, one job, in this process: index a BEIR corpus or run queries, and print one JSON line.

    python bench/search_peers.py ENGINE index CORPUS INDEX_DIR
    python bench/search_peers.py ENGINE query INDEX_DIR QUERIES [--top 100] [--run OUT]

ENGINE is ``tantivy`` (tantivy-py), ``bm25s``, ``fts5`` (SQLite FTS5 from the standard library) or ``gainscope``
(gainscope's embedded engine, through its own API). Every engine indexes ``title`` and ``text``, tokenizes
words the same way (lower case, split on anything but letters and digits, no stemming, no stop words), and
ranks with BM25 over both fields, the title weighted 2 (tantivy: query-time field boost; FTS5: the column
weights of ``bm25()``; bm25s: one index per field and the weighted sum of their scores). Queries are
disjunctions of their words (any word matches). Reported: seconds for the job (reading the input included;
loading an index reported apart), documents or queries per second, and the peak resident memory of the
process (``ru_maxrss``, which includes the interpreter and the engine's imports).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

FIELDS = ("title", "text")
BOOSTS = {"title": 2.0, "text": 1.0}
_WORD = re.compile(r"\w+")


def read_corpus(path: Path) -> Iterator[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            yield json.loads(line)


def read_queries(path: Path) -> list[tuple[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return [(q["_id"], q["text"]) for q in map(json.loads, fh)]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------------------------------------ tantivy
def tantivy_index(corpus: Path, out: Path) -> int:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    for field in FIELDS:
        builder.add_text_field(field, stored=True, index_option="freq")
    out.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(builder.build(), path=str(out))
    writer = index.writer(heap_size=256_000_000, num_threads=2)
    n = 0
    for doc in read_corpus(corpus):
        writer.add_document(tantivy.Document(id=doc["_id"], title=doc.get("title", ""), text=doc.get("text", "")))
        n += 1
    writer.commit()
    writer.wait_merging_threads()
    return n


def tantivy_query(index_dir: Path, queries: list[tuple[str, str]], top: int) -> Iterator[tuple[str, list]]:
    import tantivy

    index = tantivy.Index.open(str(index_dir))
    searcher = index.searcher()
    for qid, text in queries:
        terms = " ".join(_WORD.findall(text.lower()))
        query = index.parse_query(terms, list(FIELDS), field_boosts=BOOSTS)
        hits = searcher.search(query, top).hits
        yield qid, [(searcher.doc(address)["id"][0], score) for score, address in hits]


# ------------------------------------------------------------------------------------------------ bm25s
def bm25s_index(corpus: Path, out: Path) -> int:
    import bm25s

    docs = list(read_corpus(corpus))
    out.mkdir(parents=True, exist_ok=True)
    (out / "ids.json").write_text(json.dumps([d["_id"] for d in docs]))
    for field in FIELDS:
        tokens = bm25s.tokenize([d.get(field, "") for d in docs], stopwords=None, show_progress=False)
        model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        model.index(tokens, show_progress=False)
        model.save(str(out / field))
    return len(docs)


def bm25s_query(index_dir: Path, queries: list[tuple[str, str]], top: int) -> Iterator[tuple[str, list]]:
    import bm25s
    import numpy as np

    ids = json.loads((index_dir / "ids.json").read_text())
    models = {field: bm25s.BM25.load(str(index_dir / field), mmap=False) for field in FIELDS}
    for qid, text in queries:
        scores = np.zeros(len(ids), dtype=np.float32)
        for field, model in models.items():
            words = [w for w in _WORD.findall(text.lower()) if w in model.vocab_dict]
            if words:
                scores += BOOSTS[field] * model.get_scores(words)
        n = min(top, int((scores > 0).sum()))
        best = np.argpartition(-scores, n - 1)[:n] if n else np.zeros(0, dtype=np.int64)
        best = best[np.argsort(-scores[best], kind="stable")]
        yield qid, [(ids[i], float(scores[i])) for i in best]


# ------------------------------------------------------------------------------------------------ FTS5
def fts5_index(corpus: Path, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(out / "index.sqlite")
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, title, text, tokenize='unicode61')")
    n = 0
    with db:
        batch = []
        for doc in read_corpus(corpus):
            batch.append((doc["_id"], doc.get("title", ""), doc.get("text", "")))
            if len(batch) == 10_000:
                db.executemany("INSERT INTO docs VALUES (?, ?, ?)", batch)
                n += len(batch)
                batch = []
        db.executemany("INSERT INTO docs VALUES (?, ?, ?)", batch)
        n += len(batch)
        db.execute("INSERT INTO docs(docs) VALUES ('optimize')")
    db.close()
    return n


def fts5_query(index_dir: Path, queries: list[tuple[str, str]], top: int) -> Iterator[tuple[str, list]]:
    db = sqlite3.connect(index_dir / "index.sqlite")
    sql = "SELECT id, -bm25(docs, 0.0, ?, ?) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0.0, ?, ?) LIMIT ?"
    weights = (BOOSTS["title"], BOOSTS["text"])
    for qid, text in queries:
        match = " OR ".join(f'"{w}"' for w in _WORD.findall(text.lower()))
        yield qid, db.execute(sql, (*weights, match, *weights, top)).fetchall()


# ------------------------------------------------------------------------------------------------ gainscope
def gainscope_index(corpus: Path, out: Path) -> int:
    from gainscope.search.embedded import build_index

    return build_index(corpus, out, fields={"title": 2.0, "text": 1.0}).documents


def gainscope_query(index_dir: Path, queries: list[tuple[str, str]], top: int) -> Iterator[tuple[str, list]]:
    from gainscope.search.embedded import EmbeddedEngine
    from gainscope.search.engine import SearchQuery

    engine = EmbeddedEngine(index_dir, display=[])  # ids and scores, as the peers return
    knobs = engine.resolve({})
    for qid, text in queries:  # what the runner's attempt runs for each query (here without a worker thread)
        response = engine.run(engine.prepare(SearchQuery(qid, text), knobs, top))
        yield qid, [(hit.id, hit.score) for hit in response.hits]


ENGINES = {"tantivy": (tantivy_index, tantivy_query), "bm25s": (bm25s_index, bm25s_query),
           "fts5": (fts5_index, fts5_query), "gainscope": (gainscope_index, gainscope_query)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=sorted(ENGINES))
    parser.add_argument("job", choices=["index", "query"])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--top", type=int, default=100)
    parser.add_argument("--run", type=Path, default=None, help="write the results as a TREC run")
    args = parser.parse_args()
    index, query = ENGINES[args.engine]
    if args.job == "index":
        started = time.perf_counter()
        n = index(args.source, args.target)
        seconds = time.perf_counter() - started
        size = sum(p.stat().st_size for p in args.target.rglob("*") if p.is_file())
        print(json.dumps({"engine": args.engine, "job": "index", "documents": n, "seconds": seconds,
                          "per_second": n / seconds, "peak_mb": peak_mb(), "index_mb": size / 1e6}))
        return
    queries = read_queries(args.target)
    started = time.perf_counter()
    results = query(args.source, queries, args.top)
    first = next(results)  # the index is loaded before the first answer
    loaded = time.perf_counter()
    answers = [first, *results]
    seconds = time.perf_counter() - loaded
    if args.run is not None:
        with args.run.open("w", encoding="utf-8") as fh:
            for qid, hits in answers:
                for rank, (doc, score) in enumerate(hits, start=1):
                    fh.write(f"{qid} Q0 {doc} {rank} {score} {args.engine}\n")
    print(json.dumps({"engine": args.engine, "job": "query", "queries": len(answers) - 1, "seconds": seconds,
                      "load_seconds": loaded - started, "per_second": (len(answers) - 1) / seconds,
                      "peak_mb": peak_mb(), "hits": sum(len(h) for _, h in answers)}))


if __name__ == "__main__":
    sys.exit(main())
