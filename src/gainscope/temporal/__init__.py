"""Temporal relevance (seed 001): focus times, their extraction from text, and temporal ranking metrics."""

from __future__ import annotations

from gainscope.temporal.extraction import PERIODS, Extraction, Mention, extract_focus_time
from gainscope.temporal.focus_time import FocusTime, as_focus_time, jaccard, overlap

__all__ = ["PERIODS", "Extraction", "FocusTime", "Mention", "as_focus_time", "extract_focus_time", "jaccard",
           "overlap"]
