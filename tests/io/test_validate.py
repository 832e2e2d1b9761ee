"""validate_files: every problem reported as an Issue, never raised; cross-file id overlap."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pytest
from tests.helpers import write

from gainscope.errors import InputError, PolicyError
from gainscope.io import Issue, validate_files


def by_code(issues: list[Issue]) -> dict[str, Issue]:
    found: dict[str, Issue] = {}
    for issue in issues:
        found.setdefault(issue.code, issue)
    return found


def test_issue_is_a_frozen_dataclass() -> None:
    issue = Issue("error", "run.txt", 3, "duplicate-doc", "duplicate doc")
    assert str(issue) == "run.txt:3: error: duplicate doc [duplicate-doc]"
    with pytest.raises(dataclasses.FrozenInstanceError):
        issue.line = 4  # type: ignore[misc]
    with pytest.raises(PolicyError):
        Issue("fatal", None, None, "x", "y")


def test_a_clean_pair_gives_only_information(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n")
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 r\nq1 Q0 d3 2 1.0 r\n")
    issues = validate_files([qrels, run])
    assert {i.severity for i in issues} == {"info"}
    codes = by_code(issues)
    assert codes["judged-docs"].message == ("1 of 2 retrieved documents (50.0%) in the shared queries are "
                                            f"judged in {qrels}")
    overlap = f"{run} vs {qrels}: 1 queries in both, 0 judged only, 0 ranked only"
    assert codes["query-overlap"].message == overlap


def test_run_problems_are_all_reported(tmp_path: Path) -> None:
    content = ("\ufeffq1 Q0 d1 1 2.0 r\n\n# a comment\nq1 Q0 d2 2 abc r\nq1 Q0 d3 3 nan r\nq1 Q0 d4 4 inf "
               "r\nq1 Q0 d5 5 0,5 r\nq1 Q0 d1 6 1.0 r\nq1 Q0 d6 7\nq1 Q0 d7 7 1.0 s\nq1 Q0 d8 x 1.0 r\n"
               "q1 Q0 d9 9 1.0 r\n")
    path = write(tmp_path, "run.txt", content)
    codes = by_code(validate_files([path]))
    assert codes["bom"].line == 1
    assert codes["blank-lines"].message == "1 blank line(s) skipped"
    assert codes["comment-lines"].severity == "info"
    assert (codes["bad-score"].line, codes["nan-score"].line, codes["inf-score"].line) == (4, 5, 6)
    assert codes["bad-score"].message == ("score must be a number; got 'abc' for query 'q1', doc 'd2'; fix the "
                                          "value (it is never read as 0) (1 more row(s) like this)")
    assert codes["bad-columns"].line == 9
    assert codes["bad-columns"].message.startswith("expected 6 whitespace-separated columns")
    assert codes["duplicate-doc"].line == 8
    assert codes["duplicate-doc"].message == ("duplicate doc 'd1' for query 'q1' (lines 1 and 8; 1 duplicate "
                                              "row(s) in all); keep one line per document, or read with "
                                              "on_duplicate='first' or 'max'")
    assert codes["duplicate-doc"].cli_message.endswith("or read with --on-duplicate first or max")
    assert codes["score-ties"].severity == "warning"
    assert codes["mixed-tags"].severity == "warning"
    assert codes["bad-rank"].line == 11
    assert codes["rank-contradicts-score"].severity == "warning"
    assert all(i.path == str(path) for i in codes.values())


def test_not_a_number_score_is_separate_from_comma(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 abc r\n")
    issue = by_code(validate_files([path]))["bad-score"]
    assert (issue.severity, issue.line) == ("error", 2)
    assert issue.message == "score must be a number; got 'abc' for query 'q1', doc 'd2'; fix the value (it is " \
                            "never read as 0)"


def test_distance_scores(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 a 1 0.1 r\nq1 Q0 b 2 0.4 r\nq1 Q0 c 3 0.9 r\n")
    issue = by_code(validate_files([path]))["rank-contradicts-score"]
    assert issue.line == 2
    assert issue.message.endswith("scores grow with rank: are they distances? negate them")


def test_judgment_problems(tmp_path: Path) -> None:
    content = ("q1 0 d1 2\nq1 0 d2 high\nq1 0 d3 0.5\nq1 0 d4 -2\nq1 0 d1 2\nq1 0 d5 1\nq1 0 d5 0\nq1 0 "
               "cafe\u0301 1\n")
    path = write(tmp_path, "qrels.txt", content)
    codes = by_code(validate_files([path]))
    assert (codes["bad-grade"].severity, codes["bad-grade"].line) == ("error", 2)
    assert (codes["float-grade"].severity, codes["float-grade"].line) == ("error", 3)  # as read_judgments
    assert (codes["negative-grade"].severity, codes["negative-grade"].line) == ("info", 4)
    assert (codes["duplicate-judgment"].severity, codes["duplicate-judgment"].line) == ("warning", 5)
    conflict = codes["conflicting-judgment"]
    assert (conflict.severity, conflict.line) == ("error", 7)
    assert conflict.message == ("conflicting judgments for query 'q1', doc 'd5': grade 0 here, grade 1 on line 6 "
                                "(1 conflicting pair(s) in all); give each document one grade per query, or read "
                                "with on_conflict='max', 'min', 'first' or 'last'")
    assert codes["non-nfc-id"].severity == "warning"
    assert codes["summary"].message == "4 judgment(s) for 1 queries; grades -2..2"  # after the duplicates


def test_id_overlap_hints(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels.txt", "001 0 d1 1\n002 0 d2 1\n")
    run = write(tmp_path, "run.txt", "1 Q0 d1 1 2.0 r\n2 Q0 d2 1 1.0 r\n")
    issue = by_code(validate_files([qrels, run]))["no-query-overlap"]
    assert issue.severity == "error"
    assert issue.message == (f"no query of the run is judged in {qrels} (run: '1', '2'; judgments: '001', "
                             "'002'); 2 query id(s) match only after stripping whitespace or leading zeros "
                             "(or Unicode normalisation), e.g. '001' (judgments) vs '1' (run); ids are "
                             "compared as exact strings: make them the same")


def test_partial_overlap_and_unjudged_documents(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels.txt", "q1 0 D1 1\nq2 0 d2 1\n")
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 r\nq3 Q0 d2 1 1.0 r\n")
    codes = by_code(validate_files([qrels, run]))
    assert codes["judged-not-ranked"].message.startswith("1 judged queries have no ranking in the run ('q2')")
    assert codes["ranked-not-judged"].message.startswith(f"1 ranked queries have no judgments in {qrels} "
                                                         "('q3')")
    assert codes["no-judged-docs"].message == (f"none of the run's documents is judged in {qrels}; check "
                                               "that both files use the same doc ids")


def test_other_formats_and_kinds(tmp_path: Path) -> None:
    truth = [{"query_id": "q", "ground_truth_document_ids": ["a"]}]
    dataset = write(tmp_path, "dataset.json", json.dumps(truth))
    answers = write(tmp_path, "answers.jsonl", json.dumps({"query_id": "q", "retrieved_document_ids": ["a"]}))
    table = write(tmp_path, "run.csv", "qid,docno,score\nq,a,abc\n")
    issues = validate_files([dataset, answers, table])
    formats = [i.message for i in issues if i.code == "format"]
    assert formats == ["read as judgments in 'json' format", "read as run in 'jsonl' format",
                       "read as run in 'csv' format"]
    bad = by_code(issues)["bad-score"]
    assert (bad.line, bad.message[:31]) == (None, "row 1: score must be a number; ")


def test_unknown_kind_and_unreadable_files(tmp_path: Path) -> None:
    odd = write(tmp_path, "odd.txt", "a b c\n")
    missing = tmp_path / "missing.txt"
    broken = write(tmp_path, "broken.jsonl", '{"query_id": "q", "doc_id": "d", "relevance": 1}\n{oops\n')
    issues = validate_files([odd, missing, broken])
    codes = by_code(issues)
    assert codes["unknown-kind"].path == str(odd)
    assert codes["unknown-kind"].message == ("cannot tell whether this file holds judgments or a run; say "
                                             f"which, for example kinds={{{str(odd)!r}: 'run'}}")
    assert codes["unknown-kind"].cli_message.endswith(f"say which, for example --kind {odd}=run")
    unreadable = [i for i in issues if i.code == "unreadable"]
    assert unreadable[0].message == f"no such file: {str(missing)!r}"
    assert (unreadable[1].line, unreadable[1].message[:13]) == (2, "invalid JSON:")
    forced = by_code(validate_files([odd], kinds=["judgments"]))
    assert forced["format"].message == "read as judgments in 'trec' format"
    assert forced["bad-columns"].line == 1


def test_a_file_whose_every_line_is_refused_is_not_called_empty(tmp_path: Path) -> None:
    # old Mac line ends: the one line holds a lone CR, refused with its line; the file is not "empty"
    run = write(tmp_path, "mac.run", b"q1 Q0 d1 1 2.0 r\rq1 Q0 d2 2 1.0 r\r")
    codes = [i.code for i in validate_files([run], kinds=["run"]) if i.severity == "error"]
    assert codes == ["lone-cr"]
    empty = write(tmp_path, "empty.run", b"")  # a file with no line at all still is
    assert [i.code for i in validate_files([empty], kinds=["run"]) if i.severity == "error"] == ["empty"]


def test_kinds_mapping_and_length(tmp_path: Path) -> None:
    path = write(tmp_path, "x.txt", "q1 d1 1\n")
    assert by_code(validate_files([path], kinds={str(path): "run"}))["format"].message == \
        "read as run in 'msmarco' format"
    with pytest.raises(PolicyError, match="kinds must give one kind per path"):
        validate_files([path], kinds=["run", "run"])


def test_undecodable_bytes_are_an_issue(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", b"q1 Q0 d1 1 2.0 r\nq1 Q0 d\xff 2 1.0 r\nq1 Q0 d3 3 0.5 r\n")
    issue = by_code(validate_files([path]))["encoding"]
    assert (issue.severity, issue.line) == ("error", 2)
    assert issue.message.startswith("cannot decode byte 0xff at byte offset 24 as UTF-8")


def test_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "# nothing\n")
    issues = validate_files([path], kinds=["judgments"])
    assert by_code(issues)["empty"].severity == "error"


# ---------------------------------------------------------------------- one set of rules (issue 13, item 9)
AGREEMENT_CASES = [
    ("qrels.txt", "q1 0 d1 0.5\n", {}),  # a fractional grade: refused without float_grades
    ("qrels.txt", "q1 0 d1 0.5\n", {"float_grades": True}),
    ("qrels.txt", "q1 0 d1 12345678901234567890\n", {}),  # 20 digits: out of range, not a float
    ("qrels.txt", "q1 0 d1 12345678901234567890\n", {"float_grades": True}),
    ("qrels.txt", "q1 0 d1 1\nq1 0 d1 2\n", {}),
    ("qrels.txt", "q1 0 d1 1\nq1 0 d1 2\n", {"on_conflict": "max"}),
    ("qrels.txt", "q1 0 d1 1\nq1 0 d\x002 1\n", {}),
    ("qrels.txt", "# nothing\n", {}),
    ("qrels.txt", "# nothing\n", {"allow_empty": True}),
    ("run.txt", "q1 Q0 d1 1 nan r\n", {}),
    ("run.txt", "q1 Q0 d1 1 nan r\n", {"nan_score": "-inf"}),
    ("run.txt", "q1 Q0 d1 1 1.0 r\nq1 Q0 d1 2 0.5 r\n", {}),
    ("run.txt", "q1 Q0 d1 1 1.0 r\nq1 Q0 d1 2 0.5 r\n", {"on_duplicate": "first"}),
    ("run.txt", "q1 Q0 d1 1 1.0 r extra\n", {}),
    ("run.txt", "q1 Q0 d1 1 1.0 r extra\n", {"extra_columns": "ignore"}),
    ("run.txt", "q1 Q0 d1 1 1,5 r\n", {}),
    ("run.txt", "q1 Q0 d1 x 1.5 r\n", {}),
    ("run.txt", "q1 Q0 d1 1 1.5 r\rq1 Q0 d2 2 0.5 r\r", {}),
    ("run.txt", "q1 d1 30\nq1 d2 20\n", {}),
]


@pytest.mark.parametrize(("name", "content", "options"), AGREEMENT_CASES)
def test_validate_errs_exactly_where_the_readers_do(tmp_path: Path, name: str, content: str,
                                                     options: dict[str, object]) -> None:
    from gainscope.io import read_judgments, read_run

    path = write(tmp_path, name, content)
    reader = read_judgments if name.startswith("qrels") else read_run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            reader(path, **options)  # type: ignore[operator]
            refused = None
        except InputError as exc:
            refused = str(exc)
    kinds = ["judgments" if name.startswith("qrels") else "run"]
    errors = [i for i in validate_files([path], kinds=kinds, **options)  # type: ignore[arg-type]
              if i.severity == "error"]
    assert bool(errors) == (refused is not None), (errors, refused)
    if refused is not None:  # and with the readers' own words
        assert any(refused.endswith(i.message.split(" (1 more")[0]) for i in errors), (refused, errors)


def test_validate_names_flags_on_the_command_line(cli_runner, tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 0.5\n")
    code, out, _ = cli_runner("validate", str(path))
    assert code == 3
    assert "use --float-grades to keep fractional grades" in out
    assert cli_runner("validate", "--float-grades", str(path))[0] == 0
    odd = write(tmp_path, "odd.txt", "a b c\n")
    code, out, _ = cli_runner("validate", str(odd))
    assert f"say which, for example --kind {odd}=run" in out
    code, out, _ = cli_runner("validate", "--kind", f"{odd}=judgments", str(odd))
    assert "[bad-columns]" in out and "read as judgments in 'trec' format" in out
    code, _, err = cli_runner("validate", "--kind", "odd.txt", str(odd))
    assert code == 2 and "expected FILE=judgments or FILE=run; got 'odd.txt'" in err


def test_a_damaged_gzip_is_an_issue_of_its_file_and_the_others_are_still_checked(tmp_path: Path) -> None:
    """A truncated .gz failed validate as a whole (error: ..., nothing else reported) while a bad CRC was an
    issue of its file: both are now issues, and the judgments are still checked (issue 13, item 13)."""
    import gzip

    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    data = gzip.compress(b"q1 Q0 d1 1 2.0 r\n" * 2000)
    truncated = tmp_path / "t.run.gz"
    truncated.write_bytes(data[:len(data) // 2])
    issues = validate_files([str(qrels), str(truncated)])
    bad = [i for i in issues if i.severity == "error"]
    assert [(i.path, i.code, i.message) for i in bad] == [
        (str(truncated), "unreadable", "the gzip data ends before the end of its compressed stream: the file is "
                                       "truncated; copy or download it again")]
    assert any(i.path == str(qrels) and i.code == "summary" for i in issues)


def test_standard_input_is_named_stdin_in_every_line_of_the_report(tmp_path: Path) -> None:
    from tests.helpers import invoke

    from gainscope.cli import cli

    qrels = write(tmp_path, "qrels.txt", "q1 0 d1 1\n")
    code, out, _ = invoke(cli, "validate", qrels, "-", input="q9 Q0 d1 1 1.0 r\nq9 Q0 d2 x 0.5 r\n")
    assert code == 3
    lines = [line for line in out.splitlines() if "stdin" in line or line.split()[1:2] == ["-:"]]
    # before: the format and overlap lines said "-:" while the line errors said "<stdin>:2:"
    assert [line.split()[1] for line in lines] == ["<stdin>:", "<stdin>:2:", "<stdin>:", "<stdin>:"]
    assert "error   <stdin>: [no-query-overlap]" in out
    code, out, _ = invoke(cli, "validate", "-", input="zzz")
    assert "error   <stdin>: [unknown-kind]" in out and "--kind -=run" in out
