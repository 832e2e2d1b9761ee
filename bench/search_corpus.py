"""A synthetic corpus and queries for the search benchmarks, reproducible from a fixed seed.

Documents are BEIR JSONL (``{"_id", "title", "text"}``): titles of 4-10 words and texts of 40-160 words drawn
from a vocabulary of 30,000 made-up words with Zipf-distributed frequencies (exponent 1.1, as word frequencies in
English text), so that a few words are in most documents and most words in few. Queries have 2-4 words drawn from
the same distribution with the 30 most frequent words left out (they play the part of stop words).

    python bench/search_corpus.py --docs 100000 --queries 1000 --out /tmp/gs/search [--seed 7]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

VOCABULARY = 30_000
ZIPF = 1.1
STOP = 30
_LETTERS = "bcdfghjklmnprstvz"
_VOWELS = "aeiou"


def words(n: int, seed: int) -> list[str]:
    """``n`` distinct pronounceable made-up words (consonant-vowel syllables)."""
    rng = np.random.default_rng(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        syllables = int(rng.integers(1, 4))
        word = "".join(_LETTERS[int(rng.integers(len(_LETTERS)))] + _VOWELS[int(rng.integers(len(_VOWELS)))]
                       for _ in range(syllables))
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


def _zipf_probabilities(n: int) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1) ** ZIPF
    return p / p.sum()


def generate(docs: int, queries: int, out: Path, seed: int = 7) -> tuple[Path, Path]:
    """Write ``corpus.jsonl`` and ``queries.jsonl`` into ``out``; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    vocab = np.array(words(VOCABULARY, seed))
    p = _zipf_probabilities(VOCABULARY)
    rng = np.random.default_rng(seed + 1)
    corpus = out / "corpus.jsonl"
    title_lengths = rng.integers(4, 11, size=docs)
    text_lengths = rng.integers(40, 161, size=docs)
    title_words = vocab[rng.choice(VOCABULARY, size=int(title_lengths.sum()), p=p)].tolist()
    text_words = vocab[rng.choice(VOCABULARY, size=int(text_lengths.sum()), p=p)].tolist()
    with corpus.open("w", encoding="utf-8") as fh:
        t = x = 0
        for i in range(docs):
            title = " ".join(title_words[t:t + title_lengths[i]])
            text = " ".join(text_words[x:x + text_lengths[i]])
            t += int(title_lengths[i])
            x += int(text_lengths[i])
            fh.write(json.dumps({"_id": f"d{i}", "title": title, "text": text}) + "\n")
    q_p = p[STOP:] / p[STOP:].sum()
    query_file = out / "queries.jsonl"
    with query_file.open("w", encoding="utf-8") as fh:
        for i in range(queries):
            terms = vocab[STOP:][rng.choice(VOCABULARY - STOP, size=int(rng.integers(2, 5)), p=q_p, replace=False)]
            fh.write(json.dumps({"_id": f"q{i}", "text": " ".join(terms)}) + "\n")
    return corpus, query_file


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(*generate(args.docs, args.queries, args.out, args.seed))
