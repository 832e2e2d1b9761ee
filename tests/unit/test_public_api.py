"""The public API, pinned (issue 14 item 6): ``gainscope.__all__`` and each public subpackage's, listed exactly,
so that adding, renaming or removing a public name is a deliberate change of this file too."""

from __future__ import annotations

import importlib

import pytest

PUBLIC: dict[str, list[str]] = {
    "gainscope": [
        "CompareSettings", "Comparison", "Judgments", "Metric", "Policies", "Results", "Run", "__version__",
        "all_metric_classes", "compare", "errors", "evaluate", "evaluate_runs", "explain", "explanation_frame",
        "fuse", "optimize_weights", "parse_metric", "resolve_metrics",
    ],
    "gainscope.agents": [
        "AgentReport", "AgentSettings", "Conversation", "ConversationResult", "DedupSettings", "Deduplication",
        "Grade", "Iteration", "JudgmentIndex", "Result", "ResultMapping", "Search", "TRACE_FORMATS", "Turn",
        "UrlPolicy", "deduplicate", "deduplicate_conversation", "evaluate_agents", "evaluate_agents_async", "explain",
        "good_gain_curve", "iterations_for_all_good", "normalise_url", "read_conversations", "read_traces",
        "session_dcg", "write_traces",
    ],
    "gainscope.cases": [
        "BUILTINS", "BuiltinScorer", "Case", "CaseComparison", "CaseQuery", "CaseScore", "JavaScriptScorer",
        "PythonScorer", "QueryScore", "QueryView", "RatingScale", "Scorer", "ScorerError", "ScorerResult",
        "builtin_scorer", "case_from_dict", "case_from_quepid", "compare_cases", "edit_distance", "levenshtein",
        "python_scorer", "quepid_legacy_distance", "read_case", "read_rank_eval", "read_rre", "resolve_scorer",
        "score_case", "write_case", "write_quepid_ratings", "write_trec_qrels", "write_trec_run",
    ],
    "gainscope.cli": [
        "cli", "main",
    ],
    "gainscope.errors": [
        "BudgetExceededError", "EngineConfigError", "EngineError", "EngineRequestError", "EngineResponseError",
        "EngineStoppedError", "FatalRequestError", "FileAccessError", "FormatError", "GainscopeError",
        "GainscopeWarning", "InconsistentInputError", "InputError", "InputWarning", "InvalidParameterError",
        "JudgeAnswerError", "JudgeError", "JudgeRequestError", "MetricError", "MetricSyntaxError",
        "MissingDependencyError", "NotFoundError", "PolicyError", "QueryCoverageWarning", "RenderError", "ScorerError",
        "SpanError", "StoreError",
        "TemporalGradeError", "UndefinedMetricWarning", "UnknownFormatError", "UnknownMetricError",
        "UnresolvedTimeError", "about", "format_ids", "loose_match", "option", "spell",
    ],
    "gainscope.fusion": [
        "DEFAULT_RRF_K", "Fusion", "FusionMethod", "METHODS", "NORMALIZATIONS", "Normalization", "WeightSearch",
        "fuse", "fusion", "optimize_weights",
    ],
    "gainscope.io": [
        "Issue", "detect_format", "read_judgments", "read_run", "validate_files", "write_judgments", "write_run",
    ],
    "gainscope.metrics": [
        "Explanation", "GainMap", "Metric", "RankedQuery", "Step", "all_metric_classes", "lookup", "param",
        "parse_metric", "register",
    ],
    "gainscope.search": [
        "Engine", "Hit", "Progress", "QueryResult", "RetryPolicy", "RunOutcome", "RunSettings", "SearchQuery",
        "SearchResponse", "Snapshot", "SnapshotStore", "as_engine", "load_engine", "read_engines",
        "read_search_queries", "replay", "results_to_run", "run_queries", "run_tag", "search_queries",
    ],
    "gainscope.temporal": [
        "Extraction", "FocusTime", "Mention", "PERIODS", "SharedJudge", "TemporalCoverage", "TemporalDiversity",
        "TemporalGradeError", "TemporalMAP", "TemporalMRR", "TemporalMetric", "TemporalNDCG", "TemporalPrecision",
        "TemporalRecall", "TemporalScore", "TemporalYearPrecision", "TemporalYearRecall", "as_focus_time",
        "extract_focus_time", "jaccard", "overlap",
    ],
    "gainscope.testing": [
        "assert_matches_reference", "fast_values", "reference_values",
    ],
}
#: subpackages whose modules are imported one by one (no package-level API)
MODULES_ONLY = ("gainscope.core", "gainscope.judges", "gainscope.net", "gainscope.render", "gainscope.server")


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_names_are_exactly_these(name: str) -> None:
    module = importlib.import_module(name)
    assert sorted(module.__all__) == PUBLIC[name]
    assert len(set(module.__all__)) == len(module.__all__)


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_name_resolves(name: str) -> None:
    module = importlib.import_module(name)
    for public in module.__all__:
        assert getattr(module, public) is not None, f"{name}.{public}"


@pytest.mark.parametrize("name", MODULES_ONLY)
def test_the_other_subpackages_declare_no_package_api(name: str) -> None:
    assert not hasattr(importlib.import_module(name), "__all__")


def test_every_subpackage_is_listed() -> None:
    from pathlib import Path

    import gainscope

    root = Path(gainscope.__file__).parent
    found = {f"gainscope.{p.parent.name}" for p in root.glob("*/__init__.py")}
    assert found == (set(PUBLIC) - {"gainscope", "gainscope.errors"}) | set(MODULES_ONLY)
