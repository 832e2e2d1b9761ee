"""The embedded engine: BM25 over a folder built by ``gainscope index``, no server needed.

The ranking is bm25s's (Lù, "BM25S: Orders of magnitude faster lexical search via eager sparse scoring", 2024;
PyPI ``bm25s``), chosen over tantivy and SQLite FTS5 because it is the one of the three whose BM25 parameters can
be set: tantivy compiles ``K1 = 1.2`` and ``B = 0.75`` in as constants (``src/query/bm25.rs``) and its Python
binding exposes neither, and FTS5's ``bm25()`` takes column weights but fixes k1 and b too; bm25s is also the
fastest of the three at answering queries here (bench/RESULTS.md has the measurements).

Scoring. Each indexed field ``f`` has its own BM25 index (its own document lengths and document frequencies); a
document's score for query ``q`` is

    score(d, q) = sum_f boost_f * sum_{t in q} idf_f(t) * tf / (tf + k1 * (1 - b + b * |d_f| / avgdl_f))

where ``tf`` is the number of times ``t`` occurs in field ``f`` of ``d``, ``|d_f|`` the field's length in tokens
and ``avgdl_f`` its mean over the documents,

and Lucene's ``idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))`` (``method="lucene"``, the default; bm25s's
``robertson``, ``atire``, ``bm25l`` and ``bm25+`` variants can be chosen when indexing). This is how Lucene,
Elasticsearch (``multi_match`` of type ``most_fields``) and tantivy score a query over several fields with
boosts. A query term repeated counts as many times as it is written (as a Lucene BooleanQuery of its terms).

Knobs: ``k1``, ``b`` and one ``<field>_boost`` per indexed field (defaults: what ``gainscope index`` was given).
Boosts are applied at query time; bm25s precomputes the scores of one (k1, b), so another (k1, b) is built from the
tokens kept in the index the first time it is asked for (a few seconds per 100,000 documents) and cached in the
folder (``bm25/``) when it is writable.

Analysis: text is lower-cased and cut into tokens of two or more word characters (bm25s's default pattern
``(?u)\\b\\w\\w+\\b``), optionally without English stop words (``stopwords="en"``, bm25s's list); no stemming.

Results: the documents that hold at least one query term in a field with a boost above 0 are the hits (their
score may be 0, e.g. for a term in every document under ``atire``'s idf), ``total`` is their number, and the top
``top`` are returned by score descending, ties by index order (the corpus order). The folder::

    gainscope-index.json     what was indexed, how (fields, boosts, k1, b, method, analyzer) and a content hash
                             (SHA-256 of every document's id and stored fields, in corpus order)
    docs.sqlite              the documents' ids and stored fields (every field of the corpus record)
    tokens/<field>.*         the token ids of each field (to score another k1, b)
    bm25/<method>-k1=..-b=../<field>/   bm25s's score matrices
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gainscope.errors import EngineConfigError, InputError, MissingDependencyError
from gainscope.search.corpus import field_text, read_corpus
from gainscope.search.engine import EngineBase, Hit, Prepared, SearchQuery, SearchResponse, check_knob_names

__all__ = ["INDEX_FILE", "METHODS", "EmbeddedEngine", "IndexInfo", "build_index", "is_index", "parse_fields",
           "read_info"]

INDEX_FILE = "gainscope-index.json"
FORMAT = 1
METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_TOKEN = re.compile(TOKEN_PATTERN)
_FIELD_SPEC = re.compile(r"\s*([^\s^,]+)\s*(?:\^\s*([^\s,]+))?\s*")
CACHED_MODELS = 4


def parse_fields(spec: str | Mapping[str, float] | Sequence[str]) -> dict[str, float]:
    """Fields and boosts from ``"title^2,text"`` (a field without ``^`` has boost 1), a mapping or a list."""
    if isinstance(spec, Mapping):
        items = [(str(k), v) for k, v in spec.items()]
    elif isinstance(spec, str):
        items = []
        for part in spec.split(","):
            match = _FIELD_SPEC.fullmatch(part)
            if not match:
                raise EngineConfigError(f"cannot read the field {part!r} in --fields {spec!r}; write fields as "
                                        "title^2,text (a name, optionally ^ and a boost)")
            boost: Any = match.group(2)
            if boost is not None:
                try:
                    boost = float(boost)
                except ValueError:
                    raise EngineConfigError(f"the boost of {match.group(1)!r} in --fields {spec!r} is not a number: "
                                            f"{match.group(2)!r}") from None
            items.append((match.group(1), 1.0 if boost is None else boost))
    else:
        items = [(str(name), 1.0) for name in spec]
    out: dict[str, float] = {}
    for name, boost in items:
        if name in out:
            raise EngineConfigError(f"field {name!r} is named twice in the fields {spec!r}")
        out[name] = _boost(name, boost)
    if not out:
        raise EngineConfigError("no field to index; name at least one (--fields title^2,text)")
    return out


def _boost(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise EngineConfigError(f"the boost of field {name!r} must be a number >= 0; got {value!r}")
    return float(value)


def tokenize(text: str, stopwords: frozenset[str] = frozenset()) -> list[str]:
    """The tokens of ``text`` (see the module docstring)."""
    tokens = _TOKEN.findall(text.lower())
    return [t for t in tokens if t not in stopwords] if stopwords else tokens


def _stopwords(name: str | None) -> frozenset[str]:
    if name is None or name == "none":
        return frozenset()
    if name != "en":
        raise EngineConfigError(f"unknown stop word list {name!r}; use 'en' (English) or none")
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def _bm25s() -> Any:
    try:
        import bm25s
    except ImportError:
        raise MissingDependencyError("the embedded engine needs bm25s; pip install bm25s (a dependency of "
                                     "gainscope: reinstall gainscope)") from None
    return bm25s


@dataclass(frozen=True)
class IndexInfo:
    """What ``gainscope-index.json`` says about an index (see the module docstring)."""

    path: Path
    documents: int
    fields: dict[str, float]
    k1: float
    b: float
    method: str
    stopwords: str | None
    id_field: str | None
    source: str
    content_hash: str
    stored: tuple[str, ...]
    bm25s_version: str

    def to_json(self) -> dict[str, Any]:
        """The JSON written to ``gainscope-index.json``."""
        return {"format": FORMAT, "engine": "bm25s", "bm25s_version": self.bm25s_version,
                "documents": self.documents, "fields": self.fields, "k1": self.k1, "b": self.b,
                "method": self.method, "analyzer": {"lowercase": True, "pattern": TOKEN_PATTERN,
                                                    "stopwords": self.stopwords},
                "id_field": self.id_field, "source": self.source, "content_hash": self.content_hash,
                "stored": list(self.stored)}


def is_index(path: str | Path) -> bool:
    """True when ``path`` is a folder built by ``gainscope index``."""
    return (Path(path) / INDEX_FILE).is_file()


def read_info(path: str | Path) -> IndexInfo:
    """The description of the index at ``path``; an error naming the folder when it is not one."""
    folder = Path(path)
    meta = folder / INDEX_FILE
    if not meta.is_file():
        what = "does not exist" if not folder.exists() else "is not a gainscope index (no gainscope-index.json)"
        raise EngineConfigError(f"{folder} {what}; build one with: gainscope index CORPUS --index {folder}")
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise EngineConfigError(f"{meta}: index format {data.get('format')!r}, this gainscope reads format "
                                    f"{FORMAT}; rebuild the index with gainscope index")
        analyzer = data["analyzer"]
        return IndexInfo(folder, int(data["documents"]), {str(k): float(v) for k, v in data["fields"].items()},
                         float(data["k1"]), float(data["b"]), str(data["method"]), analyzer.get("stopwords"),
                         data.get("id_field"), str(data["source"]), str(data["content_hash"]),
                         tuple(data.get("stored", ())), str(data.get("bm25s_version", "")))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise EngineConfigError(f"{meta} is damaged ({type(exc).__name__}: {exc}); rebuild the index with "
                                "gainscope index") from None


def _check_params(k1: Any, b: Any, method: str) -> tuple[float, float]:
    if isinstance(k1, bool) or not isinstance(k1, int | float) or not math.isfinite(k1) or k1 < 0:
        raise EngineConfigError(f"k1 must be a number >= 0 (1.2 is usual); got {k1!r}")
    if isinstance(b, bool) or not isinstance(b, int | float) or not 0 <= b <= 1:
        raise EngineConfigError(f"b must be a number between 0 and 1 (0.75 is usual); got {b!r}")
    if method not in METHODS:
        raise EngineConfigError(f"unknown BM25 variant {method!r}; use one of {', '.join(METHODS)}")
    return float(k1), float(b)


def _model_key(method: str, k1: float, b: float) -> str:
    return f"{method}-k1={k1!r}-b={b!r}"


# ------------------------------------------------------------------------------------------------ building
class _Vocabulary(dict[str, int]):
    """Token -> id; a token not seen before gets the next id when looked up."""

    def __missing__(self, token: str) -> int:
        index = self[token] = len(self)
        return index


class _FieldTokens:
    """A field's token ids while indexing: a vocabulary and flat arrays of ids and offsets."""

    def __init__(self) -> None:
        self.vocab = _Vocabulary()
        self.ids = array("i")
        self.offsets = array("q", [0])

    def add(self, tokens: list[str]) -> None:
        self.ids.extend(map(self.vocab.__getitem__, tokens))
        self.offsets.append(len(self.ids))


def build_index(corpus: str | Path, out: str | Path, *, fields: str | Mapping[str, float] | Sequence[str] | None = None,
                id_field: str | None = None, k1: float = 1.2, b: float = 0.75, method: str = "lucene",
                stopwords: str | None = None, overwrite: bool = False) -> IndexInfo:
    """Index the documents of ``corpus`` (see :mod:`gainscope.search.corpus`) into the folder ``out``.

    ``fields``: the fields to index and their default boosts (``"title^2,text"``); default: every text field of
    the first document. The folder is written next to ``out`` and moved into place at the end, so a failed build
    leaves nothing half-written; an existing folder is replaced only with ``overwrite=True`` and only when it is a
    gainscope index.
    """
    bm25s = _bm25s()
    k1, b = _check_params(k1, b, method)
    stop = _stopwords(stopwords)
    target = Path(out)
    if target.exists() and not (target.is_dir() and not any(target.iterdir())):
        if not overwrite:
            raise EngineConfigError(f"{target} already exists; give another --index folder, or --overwrite to "
                                    "replace an index built before")
        if not is_index(target):
            raise EngineConfigError(f"{target} exists and is not a gainscope index; it is left as it is: give "
                                    "another --index folder")
    work = target.with_name(f".{target.name}.building-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        info = _build(bm25s, corpus, work, fields, id_field, k1, b, method, stopwords, stop)
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return IndexInfo(**{**info.__dict__, "path": target})


def _build(bm25s: Any, corpus: str | Path, work: Path, fields: Any, id_field: str | None, k1: float, b: float,
           method: str, stopwords: str | None, stop: frozenset[str]) -> IndexInfo:
    import numpy as np

    wanted = parse_fields(fields) if fields is not None else None
    db = sqlite3.connect(work / "docs.sqlite")
    try:
        count, wanted, stored, tokens, digest = _read_documents(db, corpus, wanted, id_field, stop)
    finally:
        db.close()
    source = str(corpus)
    missing = [name for name in wanted if name not in stored]
    if missing:
        raise InputError(f"{source}: no document has the field{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(map(repr, missing))}; the documents' fields are: {', '.join(stored)}")
    (work / "tokens").mkdir()
    for name, store in tokens.items():
        np.save(work / "tokens" / f"{_safe(name)}.ids.npy", np.frombuffer(store.ids, dtype=np.int32))
        np.save(work / "tokens" / f"{_safe(name)}.offsets.npy", np.frombuffer(store.offsets, dtype=np.int64))
        (work / "tokens" / f"{_safe(name)}.vocab.json").write_text(json.dumps(dict(store.vocab), ensure_ascii=False),
                                                                    encoding="utf-8")
    info = IndexInfo(work, count, dict(wanted), k1, b, method, stopwords, id_field, source, digest,
                     tuple(stored), str(getattr(bm25s, "__version__", "")))
    (work / INDEX_FILE).write_text(json.dumps(info.to_json(), indent=2, ensure_ascii=False) + "\n",
                                   encoding="utf-8")
    for name in wanted:
        _save_model(_build_model(bm25s, work, name, method, k1, b), work, name, method, k1, b)
    return info


def _read_documents(db: sqlite3.Connection, corpus: str | Path, wanted: dict[str, float] | None,
                    id_field: str | None, stop: frozenset[str]) -> tuple[int, dict[str, float], dict[str, None],
                                                                        dict[str, _FieldTokens], str]:
    """Store every document in ``db`` and tokenize its indexed fields: (count, fields and boosts, stored field
    names, tokens per field, content hash)."""
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE TABLE docs (n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, fields TEXT NOT NULL)")
    digest = hashlib.sha256()
    tokens: dict[str, _FieldTokens] = {}
    stored: dict[str, None] = {}
    count = 0
    source = str(corpus)
    batch: list[tuple[int, str, str]] = []
    for record in read_corpus(corpus, id_field=id_field):
        if wanted is None:
            wanted = {k: 1.0 for k, v in record.fields.items() if isinstance(v, str)}
            if not wanted:
                raise InputError(f"{source}:{record.line}: the first document has no text field to index; name the "
                                 "fields with --fields")
        if not tokens:
            tokens = {name: _FieldTokens() for name in wanted}
        for name, store in tokens.items():
            text = field_text(record.fields.get(name), path=source, line=record.line, name=name)
            store.add(tokenize(text, stop))
        stored.update(dict.fromkeys(record.fields))
        kept = json.dumps(record.fields, ensure_ascii=False, default=str)
        digest.update(json.dumps(record.id).encode("utf-8") + b"\x00" + kept.encode("utf-8") + b"\x00")
        batch.append((count, record.id, kept))
        count += 1
        if len(batch) >= 10_000:
            db.executemany("INSERT INTO docs VALUES (?, ?, ?)", batch)
            batch.clear()
    db.executemany("INSERT INTO docs VALUES (?, ?, ?)", batch)
    db.commit()
    if count == 0 or wanted is None:
        raise InputError(f"{source}: no document to index (the file is empty)")
    return count, wanted, stored, tokens, digest.hexdigest()


def _safe(name: str) -> str:
    """A field name usable as a file name (its hex encoding when it is not plain)."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else "x" + name.encode("utf-8").hex()


def _build_model(bm25s: Any, folder: Path, name: str, method: str, k1: float, b: float) -> Any:
    import numpy as np

    base = folder / "tokens" / _safe(name)
    ids = np.load(f"{base}.ids.npy")
    offsets = np.load(f"{base}.offsets.npy")
    vocab = json.loads(Path(f"{base}.vocab.json").read_text(encoding="utf-8"))
    flat = ids.tolist()
    bounds = offsets.tolist()
    documents = [flat[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]
    if not vocab:  # a field whose every value is empty: one dummy token that no document holds
        vocab = {"": 0}
    model = bm25s.BM25(k1=k1, b=b, method=method)
    model.index((documents, dict(vocab)), create_empty_token=False, show_progress=False)
    return model


def _model_folder(folder: Path, name: str, method: str, k1: float, b: float) -> Path:
    return folder / "bm25" / _model_key(method, k1, b) / _safe(name)


def _save_model(model: Any, folder: Path, name: str, method: str, k1: float, b: float) -> None:
    where = _model_folder(folder, name, method, k1, b)
    partial = where.with_name(f".{where.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        partial.mkdir(parents=True, exist_ok=True)
        model.save(str(partial), show_progress=False)
        partial.rename(where)
    except OSError:  # a read-only index, or another process saved it first: the model stays in memory only
        shutil.rmtree(partial, ignore_errors=True)


# ------------------------------------------------------------------------------------------------ searching
class EmbeddedEngine(EngineBase):
    """Search an index built by :func:`build_index` (see the module docstring).

    ``knobs`` override the index's defaults (``k1``, ``b``, ``<field>_boost``); ``display``: the stored fields
    returned with each hit (default: ``title`` when the documents have one).
    """

    kind = "embedded"

    def __init__(self, path: str | Path, *, name: str | None = None, knobs: Mapping[str, Any] | None = None,
                 display: Iterable[str] | None = None) -> None:
        self.info = read_info(path)
        self.path = Path(path)
        self.name = name if name is not None else self.path.name or "index"
        defaults: dict[str, Any] = {"k1": self.info.k1, "b": self.info.b}
        defaults.update({f"{_knob_name(f)}_boost": w for f, w in self.info.fields.items()})
        self._fields = {f"{_knob_name(f)}_boost": f for f in self.info.fields}
        check_knob_names(self.name, defaults)
        self._knobs = defaults
        self._knobs = self.resolve(knobs)
        shown = tuple(display) if display is not None else (("title",) if "title" in self.info.stored else ())
        unknown = [f for f in shown if f not in self.info.stored]
        if unknown:
            raise EngineConfigError(f"engine {self.name!r}: display field {unknown[0]!r} is not stored in the index "
                                    f"{self.path}; its fields: {', '.join(self.info.stored)}")
        self.display = shown
        self._stop = _stopwords(self.info.stopwords)
        self._models: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._vocab: dict[str, dict[str, int]] = {}
        self._ids: list[str] | None = None
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    # ---------------------------------------------------------------------------------------- protocol
    def configuration(self, knobs: Mapping[str, Any]) -> dict[str, Any]:
        """The index's identity (content hash, fields, analyzer, variant) and the knob values."""
        info = self.info
        return {"kind": self.kind, "index": {"content_hash": info.content_hash, "documents": info.documents,
                                             "fields": list(info.fields), "method": info.method,
                                             "analyzer": {"pattern": TOKEN_PATTERN, "stopwords": info.stopwords}},
                "display": list(self.display),
                "knobs": {k: float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
                          for k, v in knobs.items()}}

    def prepare(self, query: SearchQuery, knobs: Mapping[str, Any], top: int) -> Prepared:
        """Check the knob values; the request record is the query, the depth and the knobs."""
        k1, b = _check_params(knobs["k1"], knobs["b"], self.info.method)
        boosts = {self._fields[k]: _boost(self._fields[k], v) for k, v in knobs.items() if k in self._fields}
        request = {"engine": self.kind, "index": str(self.path), "query": query.text, "top": top,
                   "knobs": dict(knobs)}
        self._models_for(k1, b)  # loaded (or built) now, so that no query's latency includes it
        self._doc_ids()
        return Prepared(query, top, dict(knobs), request, (k1, b, boosts))

    async def attempt(self, prepared: Prepared) -> SearchResponse:
        """Run the query (in a worker thread, so that several can run at once)."""
        return await asyncio.to_thread(self.run, prepared)

    async def aclose(self) -> None:
        """Close the stored-fields database (see :meth:`close`)."""
        self.close()

    def close(self) -> None:
        """Close the stored-fields database; it is opened again when needed."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # ---------------------------------------------------------------------------------------- scoring
    def run(self, prepared: Prepared) -> SearchResponse:
        """Score ``prepared`` and return its hits (see the module docstring)."""
        import numpy as np

        started = time.perf_counter()
        k1, b, boosts = prepared.payload
        tokens = tokenize(prepared.query.text, self._stop)
        models = self._models_for(k1, b)
        ids = self._doc_ids()
        scores: Any = None
        matched: Any = None
        for field, boost in boosts.items():
            if boost <= 0:
                continue
            vocab = self._vocab_of(field)
            known = [vocab[t] for t in tokens if t in vocab]
            if not known:
                continue
            model = models[field]
            part = model.get_scores_from_ids(known) * np.float32(boost)
            scores = part if scores is None else scores + part
            indptr, indices = model.scores["indptr"], model.scores["indices"]
            if matched is None:
                matched = np.zeros(scores.shape[0], dtype=bool)
            for t in set(known):
                matched[indices[indptr[t]:indptr[t + 1]]] = True
        hits: list[Hit] = []
        total = 0
        if scores is not None:
            matched = np.flatnonzero(matched)  # the documents holding a query term in a boosted field, index order
            total = int(matched.size)
            values = scores[matched]
            top = prepared.top
            if total > top:
                kth = np.partition(values, total - top)[total - top]
                above = matched[values > kth]
                ties = matched[values == kth][:top - above.size]  # the cut falls in a tie: index order decides
                matched = np.concatenate([above, ties])
                values = scores[matched]
            order = np.lexsort((matched, -values))
            chosen = matched[order].tolist()
            fields = self._stored(chosen) if self.display else {}
            hits = [Hit(ids[n], score, fields.get(n, {})) for n, score in zip(chosen, values[order].tolist(),
                                                                              strict=True)]
        return SearchResponse(tuple(hits), total, time.perf_counter() - started, None, prepared.request)

    def _models_for(self, k1: float, b: float) -> dict[str, Any]:
        key = _model_key(self.info.method, k1, b)
        with self._lock:
            models = self._models.get(key)
            if models is None:
                models = {name: self._load_model(name, k1, b) for name in self.info.fields}
                self._models[key] = models
                while len(self._models) > CACHED_MODELS:
                    self._models.popitem(last=False)
            else:
                self._models.move_to_end(key)
            return models

    def _load_model(self, name: str, k1: float, b: float) -> Any:
        bm25s = _bm25s()
        method = self.info.method
        where = _model_folder(self.path, name, method, k1, b)
        if where.is_dir():
            return bm25s.BM25.load(str(where), mmap=True, show_progress=False)
        model = _build_model(bm25s, self.path, name, method, k1, b)
        _save_model(model, self.path, name, method, k1, b)
        return model

    def _vocab_of(self, field: str) -> dict[str, int]:
        vocab = self._vocab.get(field)
        if vocab is None:
            path = self.path / "tokens" / f"{_safe(field)}.vocab.json"
            vocab = self._vocab[field] = json.loads(path.read_text(encoding="utf-8"))
        return vocab

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            uri = (self.path / "docs.sqlite").resolve().as_uri() + "?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        return self._db

    def _doc_ids(self) -> list[str]:
        with self._lock:
            if self._ids is None:
                self._ids = [row[0] for row in self._connection().execute("SELECT id FROM docs ORDER BY n")]
            return self._ids

    def _stored(self, numbers: list[int]) -> dict[int, dict[str, Any]]:
        if not numbers:
            return {}
        marks = ",".join("?" * len(numbers))
        with self._lock:
            rows = self._connection().execute(f"SELECT n, fields FROM docs WHERE n IN ({marks})", numbers).fetchall()
        out = {}
        for n, text in rows:
            fields = json.loads(text)
            out[n] = {k: fields[k] for k in self.display if k in fields}
        return out

    def document(self, doc_id: str) -> dict[str, Any] | None:
        """The stored fields of ``doc_id`` (None when the index has no such document)."""
        with self._lock:
            row = self._connection().execute("SELECT fields FROM docs WHERE id = ?", (doc_id,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))


def _knob_name(field: str) -> str:
    """A field name as the start of a knob name: characters other than letters, digits and _ become _."""
    return re.sub(r"\W", "_", field, flags=re.ASCII)
