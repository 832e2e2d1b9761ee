"""A plain judge for the unit tests: grades come from a table keyed by document text (None = a failed label)."""

from __future__ import annotations

from gainscope.io.texts import Document, Query
from gainscope.judges.prompts import builtin_prompt
from gainscope.judges.spec import JudgeSpec
from gainscope.judges.store import PairKey, StoredLabel


class TableJudge:
    """Implements the Judge protocol; records every (query text, doc id) it is asked about."""

    def __init__(self, grades: dict[str, int | None]) -> None:
        self.spec = JudgeSpec("table", builtin_prompt("temporal"))
        self.grades = grades
        self.calls: list[tuple[str, str]] = []

    async def grade(self, query: Query, document: Document) -> StoredLabel:
        self.calls.append((query.text, document.doc_id))
        key = PairKey(self.spec.hash, query.query_id, "", document.doc_id, "")
        g = self.grades[document.text]
        if g is None:
            return StoredLabel(key, "llm", "failed", None, error="unusable answer: no grade")
        return StoredLabel(key, "llm", "ok", g)
