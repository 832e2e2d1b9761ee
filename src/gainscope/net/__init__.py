"""What every HTTP client of gainscope shares: which failures are retried and how long to wait, rate limits, and
the redaction of secrets in messages.

* :mod:`~gainscope.net.retry`: retryable statuses, ``Retry-After``, exponential backoff with full jitter, and the
  count of calls in a row that got no answer (the circuit breaker's "not answering");
* :mod:`~gainscope.net.limits`: sliding-window limits of requests (and tokens) per period, with a shared cooldown;
* :mod:`~gainscope.net.redact`: secrets (keys, tokens, URL passwords) replaced by ``***`` in every message.

The LLM judges' chat client (:mod:`gainscope.judges.client`) and the search engines' HTTP adapters
(:mod:`gainscope.search.http`) are built on these, so both retry, wait and redact by the same rules.
"""
