"""Edit distances between rating lists: they live in :mod:`gainscope.metrics.edit_distance` (every metric's
arithmetic is in ``metrics/``); re-exported here for the case scorers until the cases port."""

from gainscope.metrics.edit_distance import EDIT_DISTANCES, edit_distance, levenshtein, quepid_legacy_distance

__all__ = ["EDIT_DISTANCES", "edit_distance", "levenshtein", "quepid_legacy_distance"]
