"""Rating queues (gainscope.server.queues): a pairs file as ``gainscope pool -o`` writes it becomes a queue of a case,
rated one pair at a time; the ratings are the case's human ratings (scores move, events are kept), skip and undo
work, the place is kept across a restart (SQLite and PostgreSQL), and the ratings export as TREC qrels. Also the API,
the command line, and the whole loop: pool -> queue -> rate -> evaluate with the new qrels."""

from __future__ import annotations

import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest

import gainscope
from gainscope.errors import FormatError, InconsistentInputError, InputError, NotFoundError, QueryCoverageWarning
from gainscope.judges.pool import pairs_text, read_pairs_file
from gainscope.server import queues
from gainscope.server.workspace import Workspace

from .conftest import EXAMPLES, MOVIES, Dashboard, add_case
from .test_api import _expected

CASE = "movies-baseline-snapshot"
#: what gainscope pool writes: a header comment, then 'query_id doc_id' lines (the movies case's TREC ids q1..q4)
POOLED = pairs_text([("q1", "sw2"), ("q2", "st9"), ("q4", "harry_sally"), ("q4", "notting_hill")],
                    header=["gainscope pool: 4 of 4 unjudged pairs (strategy decision)"])


# ---------------------------------------------------------------------------------------------- the order
@pytest.mark.parametrize(("rated", "skipped", "after", "expected"), [
    ([False, False, False], [False, False, False], 0, 1),  # the next one
    ([False, True, False], [False, False, False], 0, 2),   # a rated one is passed over
    ([False, False, True], [False, False, False], 1, 0),   # from the start when none is left after
    ([False, False, False], [False, True, False], 0, 2),   # a skipped one waits ...
    ([True, False, True], [False, True, True], 0, 1),      # ... until only skipped ones are left (the next of them)
    ([False, True, True], [True, False, False], 0, 0),     # the one skipped now, when it is the only one left
    ([True, True, True], [False, True, False], 1, 3),      # every item rated: done (the number of items)
])
def test_the_next_item(rated: list[bool], skipped: list[bool], after: int, expected: int) -> None:
    assert queues.next_position(rated, skipped, after) == expected


def test_the_pairs_file_keeps_lines_and_header(tmp_path: Path) -> None:
    path = tmp_path / "pairs.txt"
    path.write_text("# gainscope pool: 3 pairs\n#second\nq1 d1\n\nq1 d1\n# later, not the header\nq2 0 d2 1\n")
    read = read_pairs_file(path)
    assert read.pairs == (("q1", "d1"), ("q2", "d2"))
    assert read.lines == (3, 7)  # the first line of each pair (line 5 repeats line 3)
    assert read.header == ("gainscope pool: 3 pairs", "second")


# ---------------------------------------------------------------------------------------------- the store
@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest) -> str | None:
    """None (the workspace's SQLite file) or a PostgreSQL URL (the tests' server; skipped when not installed)."""
    if request.param == "sqlite":
        return None
    server = request.getfixturevalue("postgres")
    return str(server.database(f"queues_{uuid.uuid4().hex[:12]}"))


def _open(folder: Path, database: str | None) -> Workspace:
    return Workspace.open(folder, database=database)


def _scores_with(changes: dict[tuple[str, str], float | None], scorer: str) -> Any:
    """score_case of the movies case with ``changes`` ({(query text, doc): rating}) to its ratings."""
    return _expected(MOVIES, scorer, changes)


def test_rate_skip_undo_resume_and_export(tmp_path: Path, database: str | None) -> None:
    pairs = tmp_path / "pairs.txt"
    pairs.write_text(POOLED)
    folder = tmp_path / "ws"
    with _open(folder, database) as ws:
        add_case(ws, MOVIES)
        record, created = queues.add_queue(ws, CASE, pairs)
        assert created and (record.id, record.name, record.source) == ("pairs", "pairs", "pairs.txt")
        assert record.note == "gainscope pool: 4 of 4 unjudged pairs (strategy decision)"
        state = queues.queue_state(ws, CASE, "pairs")
        assert {k: state["queue"][k] for k in ("total", "rated", "skipped", "remaining", "position", "done")} == {
            "total": 4, "rated": 0, "skipped": 0, "remaining": 4, "position": 0, "done": False}
        item = state["item"]
        # sw2 is the 6th result of 'star wars' (q1); the movies case has no engine and no document fields
        assert (item["qid"], item["query"], item["doc"], item["rank"], item["known"], item["rating"]) == (
            "q1", "star wars", "sw2", 6, False, None)

        answer = queues.rate(ws, CASE, "pairs", 0, 3, author="ann")
        assert answer["rated"] == {"position": 0, "doc": "sw2", "query": "star wars", "rating": 3, "previous": None,
                                   "changed": True}
        assert answer["queue"]["position"] == 1 and answer["item"]["doc"] == "st9"
        for scorer in ("nDCG@10", "P@5", "ERR@10"):  # the scores moved as score_case says
            expected = _scores_with({("star wars", "sw2"): 3}, scorer)
            assert answer["scores"][scorer]["case"] == expected.score
            assert answer["scores"][scorer]["query"]["value"] == expected.query("star wars").value
        rating = ws.store.query(CASE, "1").ratings["sw2"]  # one judgment table: the case's ratings
        assert (rating.value, rating.source, rating.author) == (3, "human", "ann")

        answer = queues.skip(ws, CASE, "pairs", 1)  # st9 waits; harry_sally is next
        assert (answer["queue"]["position"], answer["queue"]["skipped"], answer["item"]["doc"]) == (2, 1,
                                                                                                    "harry_sally")
        answer = queues.rate(ws, CASE, "pairs", 2, 2, author="ann")
        assert answer["item"]["doc"] == "notting_hill"
        answer = queues.undo(ws, CASE, "pairs", author="ann")  # takes the rating of harry_sally back, goes to it
        assert answer["undone"] == {"position": 2, "doc": "harry_sally", "action": "rate"}
        assert answer["item"]["doc"] == "harry_sally" and answer["item"]["rating"] is None
        assert "harry_sally" not in ws.store.query(CASE, "4").ratings
        queues.rate(ws, CASE, "pairs", 2, 1, author="ann")
        answer = queues.rate(ws, CASE, "pairs", 3, 0, author="bob")
        # only the skipped one is left: it comes back
        assert (answer["queue"]["position"], answer["item"]["doc"], answer["item"]["skipped"]) == (1, "st9", True)
        answer = queues.goto(ws, CASE, "pairs", 0)  # the arrows: back to a rated pair
        assert answer["item"]["rating"] == 3 and answer["item"]["author"] == "ann"
        answer = queues.goto(ws, CASE, "pairs", 1)
    with _open(folder, database) as ws:  # a restart: the queue opens where the person stopped
        state = queues.queue_state(ws, CASE, "pairs")
        assert state["queue"]["position"] == 1 and state["item"]["doc"] == "st9"
        assert (state["queue"]["rated"], state["queue"]["remaining"], state["queue"]["skipped"]) == (3, 1, 1)
        answer = queues.rate(ws, CASE, "pairs", 1, 0)
        assert answer["item"] is None and answer["queue"]["done"] and answer["queue"]["position"] == 4
        # the queue's ratings, in its order, with the case's TREC ids
        assert queues.export_qrels(ws, "pairs") == "q1 0 sw2 3\nq2 0 st9 0\nq4 0 harry_sally 1\nq4 0 notting_hill 0\n"
        events = ws.store.rating_events(CASE, query_id="4")
        assert [(e.doc_id, e.previous, e.rating, e.author) for e in events] == [
            ("notting_hill", None, 0, "bob"), ("harry_sally", None, 1, "ann"), ("harry_sally", 2, None, "ann"),
            ("harry_sally", None, 2, "ann")]
        # the same pairs under the same name are the same queue; the case's deletion removes its queues
        assert queues.add_queue(ws, CASE, pairs) == (ws.store.queues.queue("pairs"), False)
        ws.store.delete_case(CASE)
        assert ws.store.queues.queues() == []
        assert ws.store.database.query("SELECT COUNT(*) FROM ws_queue_items")[0][0] == 0


def test_a_pair_rated_elsewhere_counts_and_llm_labels_do_not(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.txt"
    pairs.write_text(POOLED)
    with _open(tmp_path / "ws", None) as ws:
        add_case(ws, MOVIES)
        queues.add_queue(ws, CASE, pairs)
        ws.store.set_rating(CASE, "2", "st9", 1, source="human", author="on the query page")
        ws.store.set_rating(CASE, "1", "sw2", 2, source="llm:abc", author="a model")
        state = queues.queue_state(ws, CASE, "pairs")
        assert (state["queue"]["rated"], state["item"]["doc"], state["item"]["rated"]) == (1, "sw2", False)
        assert state["item"]["rating"] == 2 and state["item"]["source"] == "llm:abc"
        assert queues.export_qrels(ws, "pairs") == "q2 0 st9 1\n"  # an LLM label is not a person's rating
        queues.rate(ws, CASE, "pairs", 0, 3)  # a person confirms or corrects it
        # undo gives the label back, with its source
        queues.undo(ws, CASE, "pairs")
        back = ws.store.query(CASE, "1").ratings["sw2"]
        assert (back.value, back.source, back.author) == (2, "llm:abc", "a model")


def test_what_a_queue_refuses(tmp_path: Path) -> None:
    with _open(tmp_path / "ws", None) as ws:
        add_case(ws, MOVIES)
        bad = tmp_path / "bad.txt"
        bad.write_text("q1 sw2\nq1 sw3 x y z\n")
        with pytest.raises(FormatError, match=r"bad.txt:2: 5 columns: a line holds 'query_id doc_id'"):
            queues.add_queue(ws, CASE, bad)
        bad.write_text("# gainscope pool\nq1 sw2\nq9 x\n")
        with pytest.raises(InconsistentInputError) as caught:
            queues.add_queue(ws, CASE, bad, shown_as="mine.txt")
        assert str(caught.value) == (
            f"mine.txt:3: query 'q9' is not a query of case '{CASE}' (its queries' TREC ids: q1, q2, q3, q4); a queue "
            "rates pairs of the case's queries: pool runs whose query ids are the case's, as its TREC qrels and run "
            "exports write them")
        bad.write_text("# only a header\n")
        with pytest.raises(InputError, match=r"^.*bad.txt holds no pair: a pairs file has a 'query_id doc_id' line"):
            queues.add_queue(ws, CASE, bad)
        with pytest.raises(NotFoundError, match="no case 'nope'"):
            queues.add_queue(ws, "nope", bad)
        assert ws.store.queues.queues() == []  # nothing half-made
        good = tmp_path / "good.txt"
        good.write_text(POOLED)
        queues.add_queue(ws, CASE, good)
        with pytest.raises(NotFoundError, match=f"^no queue 'nope' in case '{CASE}'; its queues: good$"):
            queues.queue_state(ws, CASE, "nope")
        with pytest.raises(InputError, match=r"^queue 'good' has nothing to undo$"):
            queues.undo(ws, CASE, "good")
        with pytest.raises(InputError, match=r"^'position' is an item of queue 'good': 0 to 3; got 4$"):
            queues.rate(ws, CASE, "good", 4, 1)
        with pytest.raises(InputError, match=r"outside|scale"):
            queues.rate(ws, CASE, "good", 0, 7)
        with pytest.raises(InputError, match=r"^'rating' is a number on the case's scale"):
            queues.rate(ws, CASE, "good", 0, None)
        queues.rate(ws, CASE, "good", 0, 2)
        ws.store.set_rating(CASE, "1", "sw2", 1, source="human", author="someone else")
        with pytest.raises(InputError, match=r"changed after it was given in this queue \(it is now 1 by someone "
                                             r"else\); undo would overwrite that"):
            queues.undo(ws, CASE, "good")


# ---------------------------------------------------------------------------------------------- the API
@pytest.fixture(scope="module")
def movies(dashboard: Dashboard) -> Dashboard:
    add_case(dashboard.workspace, MOVIES)
    return dashboard


def test_the_api_imports_rates_and_exports(movies: Dashboard) -> None:
    base = f"/api/cases/{CASE}/queues"
    status, created = movies.call("POST", base, {"filename": "pairs.txt", "content": POOLED, "name": "First batch"})
    assert status == 201 and (created["id"], created["total"], created["rated"]) == ("first-batch", 4, 0)
    status, again = movies.call("POST", base, {"filename": "pairs.txt", "content": POOLED, "name": "First batch"})
    assert (status, again["id"]) == (200, "first-batch")
    status, answer = movies.call("POST", base, {"filename": "mine.txt", "content": "q1 sw2\nq1\n"})
    assert status == 400 and answer["error"].startswith("mine.txt:2: expected 'query_id doc_id'")  # not the temp copy
    q = f"{base}/first-batch"
    status, state = movies.call("GET", q)
    assert status == 200 and state["item"]["doc"] == "sw2" and state["scale"]["values"] == [0, 1, 2, 3]
    status, answer = movies.call("POST", f"{q}/rate", {"position": 0, "rating": 3},
                                 headers={"X-Gainscope-User": "ann"})
    assert status == 200 and answer["item"]["doc"] == "st9"
    assert answer["scores"]["nDCG@10"]["case"] == _scores_with({("star wars", "sw2"): 3}, "nDCG@10").score
    status, answer = movies.call("POST", f"{q}/skip", {"position": 1})
    assert status == 200 and answer["item"]["doc"] == "harry_sally"
    status, answer = movies.call("POST", f"{q}/undo", {})
    assert status == 200 and answer["undone"]["action"] == "skip" and answer["item"]["doc"] == "st9"
    status, answer = movies.call("PUT", f"{q}/position", {"position": 0})
    assert status == 200 and answer["item"]["author"] == "ann"
    assert movies.call("GET", q, params={"position": "9"})[1] == {
        "error": "'position' is between 0 and 4 (the number of items); got 9"}
    assert movies.call("POST", f"{q}/rate", {"position": 0})[1] == {
        "error": "the request needs 'rating' (a number on the case's scale)"}
    assert movies.call("POST", f"{q}/rate", {"position": "0", "rating": 1})[1] == {
        "error": "'position' must be an integer; got '0'"}
    status, listed = movies.call("GET", base)
    assert status == 200 and [(x["id"], x["rated"], x["total"]) for x in listed] == [("first-batch", 1, 4)]
    response = movies.client.get(f"{q}/export", params={"format": "qrels"})
    assert response.status_code == 200 and response.text == "q1 0 sw2 3\n"
    assert response.headers["content-disposition"] == 'attachment; filename="first-batch.qrels"'
    assert movies.call("GET", f"{q}/export", params={"format": "csv"})[0] == 400
    assert movies.call("GET", f"{base}/nope")[0] == 404
    assert movies.call("GET", "/api/cases/nope/queues")[0] == 404
    assert movies.anonymous.post(f"{q}/rate", json={"position": 0, "rating": 1}).status_code == 403
    # the pages
    page = movies.client.get(f"/cases/{CASE}/queues")
    assert page.status_code == 200 and "first-batch" in page.text and "1 / 4" in page.text
    page = movies.client.get(f"/cases/{CASE}/queues/first-batch")
    assert page.status_code == 200 and 'id="queue"' in page.text
    assert movies.client.get(f"/cases/{CASE}/queues/nope").status_code == 404
    assert movies.call("DELETE", q)[0] == 200 and movies.call("GET", q)[0] == 404
    assert movies.workspace.store.query(CASE, "1").ratings["sw2"].value == 3  # the case keeps the rating


# ---------------------------------------------------------------------------------------------- the command line
def test_the_command_line(cli_runner: Any, tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    assert cli_runner("case", "add", ws, str(MOVIES))[0] == 0
    pairs = tmp_path / "pairs.txt"
    pairs.write_text(POOLED)
    code, out, err = cli_runner("queue", "add", ws, str(pairs), "--case", CASE)
    assert (code, out) == (0, "pairs\n"), err
    assert err == (f"queue 'pairs' of case '{CASE}' added: 4 pairs, 0 rated, 4 remaining; rate them at "
                   f"/cases/{CASE}/queues/pairs\n")
    code, out, err = cli_runner("queue", "add", ws, str(pairs), "--case", CASE)
    assert (code, out) == (0, "pairs\n") and "resumed (it holds these pairs already)" in err
    with Workspace.open(ws) as opened:
        queues.rate(opened, CASE, "pairs", 2, 2)
    code, out, _ = cli_runner("queue", "list", ws)
    assert out.splitlines() == ["queue  case                      rated  skipped  remaining  name",
                                f"pairs  {CASE}  1/4    0        3          pairs"]
    code, out, err = cli_runner("queue", "export", ws, "pairs", "-o", str(tmp_path / "new.qrels"))
    assert (code, out) == (0, "") and (tmp_path / "new.qrels").read_text() == "q4 0 harry_sally 2\n"
    assert err == f"1 of 4 pairs of queue 'pairs' rated; written to {tmp_path / 'new.qrels'}\n"
    code, _, err = cli_runner("queue", "add", ws, str(pairs), "--case", "nope")
    assert code == 2 and f"Invalid value for --case: no case 'nope' in this workspace; its cases: {CASE}" in err
    code, _, err = cli_runner("queue", "export", ws, "nope")
    assert code == 2 and "Invalid value for QUEUE: no queue 'nope' in this workspace; its queues: pairs" in err
    (tmp_path / "bad.txt").write_text("q1 sw2\nq7 sw1\n")
    code, _, err = cli_runner("queue", "add", ws, str(tmp_path / "bad.txt"), "--case", CASE)
    assert code == 3 and err.startswith(f"error: {tmp_path / 'bad.txt'}:2: query 'q7' is not a query of case")
    code, _, err = cli_runner("queue", "list", str(tmp_path / "missing"))
    assert code == 4 and "no such workspace folder" in err
    code, _, err = cli_runner("serve", ws, "--queue", str(pairs))
    assert code == 2 and "--queue PAIRS and --case CASE go together" in err


# ---------------------------------------------------------------------------------------------- the whole loop
def test_pool_then_queue_then_rate_then_evaluate(cli_runner: Any, tmp_path: Path) -> None:
    """The runs of the movies case before and after a change, pooled against its qrels; the pairs rated in the
    dashboard; the qrels with the new ratings change P@6 as the hand arithmetic says."""
    ws = str(tmp_path / "ws")
    assert cli_runner("case", "add", ws, str(MOVIES))[0] == 0
    files = {}
    for name in ("before", "after"):
        files[name] = tmp_path / f"{name}.run"
        code, _, err = cli_runner("case", "export", str(EXAMPLES / "cases" / f"movies_{name}.json"), "--run",
                                  str(files[name]), "--tag", name, *(["--qrels", str(tmp_path / "case.qrels")]
                                                                    if name == "before" else []))
        assert code == 0, err
    pairs = tmp_path / "pairs.txt"
    code, _, err = cli_runner("pool", str(files["before"]), str(files["after"]), "--judgments",
                              str(tmp_path / "case.qrels"), "--budget", "4", "--strategy", "decision", "-o", str(pairs))
    assert code == 0, err
    assert pairs.read_text().splitlines()[1:] == ["q1 sw2", "q2 st9", "q4 harry_sally", "q4 notting_hill"]
    assert cli_runner("queue", "add", ws, str(pairs), "--case", CASE)[0] == 0
    with Workspace.open(ws) as opened:
        for position, rating in ((0, 3), (1, 0), (2, 2)):  # notting_hill is skipped
            queues.rate(opened, CASE, "pairs", position, rating)
        queues.skip(opened, CASE, "pairs", 3)
    code, out, _ = cli_runner("queue", "export", ws, "pairs")
    assert out == "q1 0 sw2 3\nq2 0 st9 0\nq4 0 harry_sally 2\n"
    combined = tmp_path / "combined.qrels"
    combined.write_text((tmp_path / "case.qrels").read_text() + out)
    # before: after.run's top 6 of q1 (sw4 sw5 sw6 sw1 spaceballs sw2) hold 5 judged relevant, sw2 unjudged: 5/6;
    # q2 (st2 galaxyquest st9 st1) 3 relevant: 3/6; q3 (gf1 gf3 gf2): 3/6; q4 has no judgment and is left out
    with pytest.warns(QueryCoverageWarning, match="q4"):
        before = gainscope.evaluate(str(tmp_path / "case.qrels"), str(files["after"]), ["P@6"])
    assert before.aggregates["P@6"] == pytest.approx((5 / 6 + 3 / 6 + 3 / 6) / 3)  # 11/18 = 0.6111
    # after: sw2 = 3 makes q1 6/6; st9 = 0 keeps q2 at 3/6; q4 is judged now: harry_sally = 2 is 1/6
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every ranked query is judged now: no warning
        after = gainscope.evaluate(str(combined), str(files["after"]), ["P@6"])
    assert after.per_query("P@6") == pytest.approx({"q1": 1.0, "q2": 0.5, "q3": 0.5, "q4": 1 / 6})
    assert after.aggregates["P@6"] == pytest.approx((6 / 6 + 3 / 6 + 3 / 6 + 1 / 6) / 4)  # 13/24 = 0.5417
