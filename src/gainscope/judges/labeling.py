"""Labelling (query, document) pairs with an LLM judge: cached in the store, resumable, budgeted, never silent.

:class:`LLMJudge` asks the model for one pair. An answer that is not a grade on the scale (no JSON, no grade,
out of range) is asked again, up to ``answer_attempts`` requests in all; a request that fails after the client's
retries counts as one attempt too. When every attempt fails the label is *failed*: it carries no grade, only the
last raw answer and the error, and it is stored and reported as such -- never as 0.

:func:`label_pairs` runs a judge over many pairs with a fixed pool of workers: pairs already labelled by this
judge on the same texts come from the store (no request), pairs labelled by a human are skipped (unless asked
not to), pairs claimed by another live process are left to it, and every new label is committed as soon as it
arrives. The budget (calls to the model and cost) is checked before each call: nothing is sent that could take the
spend past it. The cost of a call is reserved from an upper bound of its size (prompt tokens at most the UTF-8
bytes of the messages, completion tokens at most ``max_tokens``) and settled with the real ``usage``; an answer
without usage is charged its reservation. Pairs left when the budget is spent are reported. Costs come only from
the usage the server reports, priced with :class:`Prices`; token counts are None when the server reported none.
``requests`` counts calls to the model (an answer asked again is another call); the HTTP requests behind them,
retries included, are counted apart.

Pairs claimed by another live process are waited for at the end of the run: when the other process records them
they are taken from the store, and when it dies or lets its claim lapse they are judged here, so every process
ends with every pair. A fatal client error (the server refuses every request) stops the run at once.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from gainscope.errors import (
    BudgetExceededError,
    InputError,
    JudgeAnswerError,
    JudgeRequestError,
    PolicyError,
    option,
)
from gainscope.io.texts import Document, Query
from gainscope.judges.answers import parse_answer
from gainscope.judges.spec import JudgeSpec
from gainscope.judges.store import JudgmentStore, PairKey, StoredLabel, text_hash
from gainscope.judges.stored import WAIT_POLL, Answer, Judge, StoredJudge

__all__ = ["Budget", "Judge", "LLMJudge", "Prices", "Progress", "label_pairs"]


@dataclass(frozen=True)
class Prices:
    """Prices per million tokens, input and output (as providers list them)."""

    input_per_million: float
    output_per_million: float

    def __post_init__(self) -> None:
        for v in (self.input_per_million, self.output_per_million):
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < math.inf:  # NaN too
                raise PolicyError(f"prices must be finite numbers >= 0 (per million tokens); got {v!r}")

    @classmethod
    def from_table(cls, path: str | Path, model: str) -> Prices:
        """The prices of ``model`` from a JSON price table: ``{"model name": {"input": 2.5, "output": 10}}``,
        per million tokens (the user's own table: prices change, so none is built in)."""
        p = Path(path)
        try:
            table = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"{p}: cannot read the price table ({exc}); expected JSON like "
                             '{"gpt-4o-mini": {"input": 0.15, "output": 0.6}}') from None
        if not isinstance(table, dict) or model not in table:
            known = ", ".join(table) if isinstance(table, dict) else "none"
            raise InputError(f"{p}: no prices for model {model!r}; the table has: {known}")
        entry = table[model]
        if not isinstance(entry, dict) or not {"input", "output"} <= set(entry):
            raise InputError(f"{p}: the prices of {model!r} need 'input' and 'output' (per million tokens)")
        return cls(entry["input"], entry["output"])

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        """The cost of a request from its real usage; None when the server reported none."""
        if prompt_tokens is None or completion_tokens is None:
            return None
        return (prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million) / 1e6


@dataclass(frozen=True)
class Budget:
    """At most ``max_requests`` requests and ``max_cost`` spent (needs prices) by one labelling run."""

    max_requests: int | None = None
    max_cost: float | None = None

    def __post_init__(self) -> None:
        n = self.max_requests
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise PolicyError(f"{option('max_requests', ..., cli='--max-requests')} must be an integer >= 1; got {n!r}")
        c = self.max_cost
        if c is not None and (isinstance(c, bool) or not isinstance(c, int | float) or not 0 <= c < math.inf):
            # a NaN budget compares False with every cost, and so would never stop the spending
            raise PolicyError(f"{option('max_cost', ..., cli='--max-cost')} must be a finite number >= 0; got {c!r}")


class _Client(Protocol):
    async def complete(self, model: str, messages: list[dict[str, str]], *, temperature: float | None = ...,
                       max_tokens: int | None = ..., seed: int | None = ..., extra: dict[str, object] | None = ...
                       ) -> object: ...


@dataclass
class _Spend:
    """Calls and cost so far, with the reservations of calls in flight."""

    budget: Budget
    prices: Prices | None
    calls: int = 0
    http_requests: int = 0
    cost: float = 0.0
    reserved: float = 0.0
    unpriced: int = 0  # answers without usage while prices were set: charged at their reservation

    def reserve(self, estimate: float) -> None:
        if self.budget.max_requests is not None and self.calls >= self.budget.max_requests:
            raise BudgetExceededError(f"the budget of {self.budget.max_requests} requests is spent")
        if self.budget.max_cost is not None and self.cost + self.reserved + estimate > self.budget.max_cost:
            raise BudgetExceededError(f"the next request could take the cost past the budget of "
                                      f"{self.budget.max_cost:g} (spent {self.cost:.4f})")
        self.calls += 1
        self.reserved += estimate

    def settle(self, estimate: float, cost: float | None, *, answered: bool) -> None:
        """Replace the reservation by the real cost; an answer without usage is charged its reservation (an upper
        bound), so a server that reports no usage cannot slip past a cost budget."""
        self.reserved -= estimate
        if self.prices is None or not answered:
            return
        if cost is None:
            self.unpriced += 1
            self.cost += estimate
        else:
            self.cost += cost


#: completion tokens assumed when a judge sets no max_tokens (for reservations only)
DEFAULT_COMPLETION_BOUND = 4096


class LLMJudge:
    """A judge backed by a chat-completions client (:class:`gainscope.judges.client.ChatClient`)."""

    def __init__(self, spec: JudgeSpec, client: _Client, *, answer_attempts: int = 3,
                 prices: Prices | None = None) -> None:
        if answer_attempts < 1:
            raise PolicyError(f"answer_attempts must be >= 1; got {answer_attempts}")
        self.spec = spec
        self.client = client
        self.answer_attempts = answer_attempts
        self.prices = prices
        self._spend: _Spend | None = None

    def key(self, query: Query, document: Document) -> PairKey:
        """The store key of a pair for this judge."""
        return PairKey(self.spec.hash, query.query_id, text_hash(_query_text(query)), document.doc_id,
                       text_hash(_doc_text(document)))

    def _estimate(self, messages: list[dict[str, str]]) -> float:
        """An upper bound of a call's cost: no tokenizer makes more tokens than UTF-8 bytes (plus a few per
        message for the chat format), and no answer is longer than max_tokens."""
        if self.prices is None:
            return 0.0
        prompt = sum(len(m["content"].encode("utf-8")) + 8 for m in messages)
        return self.prices.cost(prompt, self.spec.max_tokens or DEFAULT_COMPLETION_BOUND) or 0.0

    async def grade(self, query: Query, document: Document) -> StoredLabel:
        """Ask for the pair's grade (see the module docstring). Never raises for a bad answer or a failed request;
        raises BudgetExceededError before a call the budget does not allow, and re-raises a fatal client error
        (the server refuses every request: a wrong key, model or parameter)."""
        spec = self.spec
        messages = spec.prompt.messages(query.text, document.text, title=document.title,
                                        narrative=query.narrative)
        key = self.key(query, document)
        tokens_in: int | None = 0
        tokens_out: int | None = 0
        cost: float | None = 0.0
        raw, error, calls, model = "", "", 0, spec.model
        for _ in range(self.answer_attempts):
            estimate = self._estimate(messages)
            if self._spend is not None:
                self._spend.reserve(estimate)
            calls += 1
            try:
                done = await self.client.complete(spec.model, messages, temperature=spec.temperature,
                                                  max_tokens=spec.max_tokens, seed=spec.seed, extra=spec.params)
            except JudgeRequestError as exc:
                if self._spend is not None:
                    self._spend.settle(estimate, None, answered=False)
                    self._spend.http_requests += exc.attempts
                if getattr(exc, "fatal", False):
                    raise
                error = f"request failed: {exc}"
                continue
            pt, ct = getattr(done, "prompt_tokens", None), getattr(done, "completion_tokens", None)
            this_cost = self.prices.cost(pt, ct) if self.prices is not None else None
            if self._spend is not None:
                self._spend.settle(estimate, this_cost, answered=True)
                self._spend.http_requests += int(getattr(done, "attempts", 1))
            tokens_in = None if tokens_in is None or pt is None else tokens_in + pt
            tokens_out = None if tokens_out is None or ct is None else tokens_out + ct
            cost = None if cost is None or this_cost is None else cost + this_cost
            raw = str(getattr(done, "text", ""))
            model = str(getattr(done, "model", "") or spec.model)
            try:
                grade, reasoning = parse_answer(raw, spec.prompt.scale)
            except JudgeAnswerError as exc:
                error = f"unusable answer: {exc}"
                continue
            return StoredLabel(key, "llm", "ok", grade, reasoning=reasoning, raw=raw, model=model,
                               prompt_tokens=tokens_in, completion_tokens=tokens_out,
                               cost=cost if self.prices else None, requests=calls, created=time.time())
        return StoredLabel(key, "llm", "failed", None, raw=raw, error=error, model=model,
                           prompt_tokens=tokens_in, completion_tokens=tokens_out,
                           cost=cost if self.prices else None, requests=calls, created=time.time())


def _query_text(q: Query) -> str:
    return q.text if not q.narrative else f"{q.text}\n{q.narrative}"


def _doc_text(d: Document) -> str:
    return d.text if not d.title else f"{d.title}\n{d.text}"


@dataclass
class Progress:
    """Counts of a labelling run, updated as it goes (and passed to the progress callback)."""

    total: int
    cached: int = 0
    human: int = 0
    missing_text: int = 0
    judged: int = 0
    failed: int = 0
    elsewhere: int = 0
    not_judged: int = 0
    requests: int = 0
    http_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    unpriced: int = 0
    started: float = field(default_factory=time.monotonic)
    budget_note: str = ""
    fatal: str = ""
    missing: list[tuple[str, str]] = field(default_factory=list)
    failures: list[StoredLabel] = field(default_factory=list)

    @property
    def done(self) -> int:
        """Pairs settled so far (from the store, skipped, judged or failed)."""
        return self.cached + self.human + self.missing_text + self.judged + self.failed

    @property
    def ungraded(self) -> int:
        """Pairs that end without a grade: failed, without text, not judged (budget or a fatal error)."""
        return self.failed + self.missing_text + self.not_judged + self.elsewhere

    @property
    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self.started


async def label_pairs(pairs: Sequence[tuple[str, str]], queries: Mapping[str, Query],
                      documents: Mapping[str, Document], *, judge: LLMJudge, store: JudgmentStore,
                      budget: Budget = Budget(), workers: int = 8, skip_human: bool = True,
                      retry_failed: bool = True, progress: Callable[[Progress], None] | None = None
                      ) -> tuple[Progress, dict[tuple[str, str], StoredLabel]]:
    """Label ``pairs`` (see the module docstring). Returns the counts and the ok labels by (query, doc) -- only
    labels of the texts given now (a label of an older text of the same ids is not one of them)."""
    if budget.max_cost is not None and judge.prices is None:
        raise PolicyError("a cost budget needs prices (per million input and output tokens)")
    stored_judge = StoredJudge(judge, store, retry_failed=retry_failed)
    state = Progress(total=len(pairs))
    labels: dict[tuple[str, str], StoredLabel] = {}
    humans = store.human_pairs() if skip_human else set()
    todo: list[tuple[Query, Document]] = []
    for q, d in pairs:
        if (q, d) in humans:
            state.human += 1
        elif q not in queries or d not in documents:
            state.missing_text += 1
            state.missing.append((q, d))
        else:
            query, doc = queries[q], documents[d]
            stored = stored_judge.lookup(query, doc)
            if stored is None:
                todo.append((query, doc))
                continue
            state.cached += 1
            if stored.status == "ok":
                labels[(q, d)] = stored
            else:
                state.failures.append(stored)
    spend = _Spend(budget, judge.prices)
    judge._spend = spend
    queue: asyncio.Queue[tuple[Query, Document]] = asyncio.Queue()
    for item in todo:
        queue.put_nowait(item)
    waiting: list[tuple[Query, Document]] = []  # claimed by another live process
    stop = asyncio.Event()

    def took(query: Query, doc: Document, answer: Answer) -> None:
        label, fresh = answer.label, answer.fresh
        if label.status == "ok":
            labels[(query.query_id, doc.doc_id)] = label
            if fresh:
                state.judged += 1
            else:
                state.cached += 1
        else:
            state.failed += 1
            state.failures.append(label)
        if fresh:
            _account(state, label, spend)
        if progress is not None:
            progress(state)

    async def worker() -> None:
        while not stop.is_set():
            try:
                query, doc = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                answer = await stored_judge.attempt(query, doc)
            except BudgetExceededError as exc:
                state.budget_note = str(exc)
                state.not_judged += 1
                stop.set()
                continue
            except JudgeRequestError as exc:  # fatal: the server refuses every request
                state.fatal = str(exc)
                state.not_judged += 1
                stop.set()
                continue
            if answer is None:  # another live process holds it: looked at again once the others are done
                waiting.append((query, doc))
            else:
                took(query, doc, answer)

    try:
        await _together(worker, workers)
        while waiting and not stop.is_set():  # pairs another process holds: its label, or ours once it lets go
            await asyncio.sleep(WAIT_POLL)
            pending, waiting[:] = list(waiting), []
            for item in pending:
                queue.put_nowait(item)
            await _together(worker, workers)
    finally:
        judge._spend = None
    state.not_judged += queue.qsize()
    state.elsewhere = len(waiting)
    _account(state, None, spend)
    if progress is not None:
        progress(state)
    return state, labels


async def _together(worker: Callable[[], Awaitable[None]], count: int) -> None:
    """Run ``count`` copies of ``worker``; when one raises (a store that cannot be written), the others are
    cancelled and awaited before the error goes on, so none is left running against a closed store."""
    tasks = [asyncio.ensure_future(worker()) for _ in range(max(1, count))]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _account(state: Progress, label: StoredLabel | None, spend: _Spend) -> None:
    state.requests = spend.calls
    state.http_requests = spend.http_requests
    if label is not None:
        state.prompt_tokens += label.prompt_tokens or 0
        state.completion_tokens += label.completion_tokens or 0
    state.cost = spend.cost
    state.unpriced = spend.unpriced
