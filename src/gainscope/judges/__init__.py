"""LLM relevance judges: graded labels for (query, document) pairs, cached, resumable, budgeted, never silent.

::

    prompts.py   grading scales, the built-in prompts (graded 0-4, umbrela 0-3, binary, temporal), user templates
    spec.py      JudgeSpec: model + prompt + parameters, and the hash that keys every label
    answers.py   strict parsing of an answer into a grade on the scale (or an error with the raw text)
    client.py    the async OpenAI-compatible chat-completions client: concurrency, RPM/TPM limits, retries
    store.py     the SQLite judgment store: labels with provenance, claims across processes, human imports
    stored.py    StoredJudge: a judge over the store, each pair paid once in a run and across processes
    pool.py      which pairs to judge: depth-k pools of runs, or explicit pairs; pairs files
    adjudication.py  the next pairs under a budget: depth, move-to-front, MaxMean, decision-aware (gainscope pool)
    decision.py  which unjudged pairs could most change the sign or significance of a comparison
    simulation.py  judgments each strategy needs to reach the conclusions of complete judgments
    labeling.py  LLMJudge and label_pairs(): many pairs through a StoredJudge, within a budget

Code that needs grades (temporal LLM mode, agent gains) takes any object with the :class:`~gainscope.judges.
labeling.Judge` protocol; it never needs the HTTP client.
"""
