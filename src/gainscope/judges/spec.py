"""A judge's canonical specification and its hash: model, prompt (name, version, full text), scale and request
parameters. The hash keys every label the judge makes (in the store) and is recorded with it as provenance, so
labels are reused only by the very same judge: another model, prompt text, temperature or token limit is
another judge. The server's address is not part of it (one model behind two proxies is one judge)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from gainscope.judges.prompts import PromptTemplate

__all__ = ["JudgeSpec"]


@dataclass(frozen=True)
class JudgeSpec:
    """Everything that decides what a judge answers."""

    model: str
    prompt: PromptTemplate
    temperature: float | None = 0.0
    max_tokens: int | None = 300
    seed: int | None = None
    #: more request fields sent as given (top_p, reasoning_effort, ...), part of the hash
    params: dict[str, Any] = field(default_factory=dict)

    def canonical(self) -> dict[str, Any]:
        """The specification as plain data, keys sorted when serialised."""
        p = self.prompt
        # a template file is known by its text, not its file name (renaming it must not re-pay every label)
        name = "template" if p.name.startswith("file:") else p.name
        return {"model": self.model, "prompt": {"name": name, "version": p.version, "system": p.system,
                                                "user": p.user, "scale": [p.scale.low, p.scale.high]},
                "temperature": None if self.temperature is None else float(self.temperature),
                "max_tokens": self.max_tokens, "seed": self.seed, "params": self.params}

    @property
    def hash(self) -> str:
        """The first 16 hex digits of the SHA-256 of the canonical JSON."""
        text = json.dumps(self.canonical(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def describe(self) -> str:
        """One line for reports: model, prompt, scale, hash."""
        return (f"{self.model}, prompt {self.prompt.name} v{self.prompt.version}, scale {self.prompt.scale}, "
                f"temperature {self.temperature}, judge {self.hash}")
