"""``gainscope case add`` and ``gainscope serve`` on the command line (in-process with click's runner, and serve as a
real process)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from .conftest import EXAMPLES, MOVIES


def test_case_add_imports_a_case_and_prints_its_id(cli_runner, tmp_path: Path) -> None:
    code, out, err = cli_runner("case", "add", str(tmp_path / "ws"), str(MOVIES))
    assert code == 0, err
    assert out == "movies-baseline-snapshot\n"
    assert err.startswith("added case 'Movies (baseline snapshot)' (4 queries) to ")
    assert "nDCG@10 0.3080, P@5 0.3875, ERR@10 0.2768" in err
    code, out, _ = cli_runner("case", "add", str(tmp_path / "ws"), str(MOVIES), "--name", "Again")
    assert (code, out) == (0, "again\n")


def test_case_add_of_a_case_without_results_says_so_instead_of_zeros(cli_runner, tmp_path: Path) -> None:
    code, out, err = cli_runner("case", "add", str(tmp_path / "ws"), str(EXAMPLES / "search" / "recipes_case.json"))
    assert (code, out) == (0, "recipes\n"), err
    assert err.endswith("(12 queries) to " + str(tmp_path / "ws" / "workspace.sqlite") + ": no results yet: rerun it "
                        "against its engine on its Tune page, or import its results (--run, --snapshot, --response)\n")


def test_case_add_reads_other_formats_and_says_what_is_wrong(cli_runner, tmp_path: Path) -> None:
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("query,docid,rating\nred shoe,d1,3\nred shoe,d2,0\n", encoding="utf-8")
    run = tmp_path / "shoes.run"
    run.write_text("red_shoe Q0 d2 1 2 r\nred_shoe Q0 d1 2 1 r\n", encoding="utf-8")
    code, out, err = cli_runner("case", "add", str(tmp_path / "ws"), str(ratings), "--run", str(run))
    assert code == 0, err
    assert out == "ratings\n" and "nDCG@10 0.6309" in err  # d1 (3) at rank 2: 7/log2(3) / 7
    bad = tmp_path / "bad.json"
    bad.write_text('{"queries": [{"query": "a", "ratings": {"d": 9}}]}', encoding="utf-8")
    code, _, err = cli_runner("case", "add", str(tmp_path / "ws"), str(bad))
    assert code == 3
    assert err == (f"error: {bad} names no rating scale and has ratings outside 0-3 (such as 9); give the scale (for "
                   "example --scale 1-10)\n")
    code, _, err = cli_runner("case", "add", str(tmp_path / "ws"), str(bad), "--scale", "1-10")
    assert code == 0, err
    code, _, err = cli_runner("case", "add", str(tmp_path / "ws"), str(bad), "--format", "rre")
    assert code == 3 and "no 'topics', 'query_groups' or 'queries'" not in err and "error:" in err
    (tmp_path / "file").write_text("x")
    code, _, err = cli_runner("case", "add", str(tmp_path / "file"), str(MOVIES))
    assert code == 2  # click: WORKSPACE must be a folder


def test_serve_refuses_another_address_without_a_token(cli_runner, tmp_path: Path) -> None:
    code, out, err = cli_runner("serve", str(tmp_path / "ws"), "--host", "0.0.0.0", "--port", "0")
    assert code == 2 and out == ""
    assert err.startswith("error: --host 0.0.0.0 makes the dashboard reachable from other machines: give --token")
    assert not (tmp_path / "ws").exists()


def test_a_bad_token_or_database_is_a_usage_error_named_as_the_option(cli_runner, tmp_path: Path) -> None:
    # was exit 3 with the library's message, after the workspace folder had been made
    code, out, err = cli_runner("serve", str(tmp_path / "ws"), "--host", "0.0.0.0", "--token", "short", "--port", "0")
    assert (code, out) == (2, "")
    assert err.endswith("Error: Invalid value for '--token': a token needs at least 8 characters and no spaces\n")
    assert not (tmp_path / "ws").exists()
    for command in (("serve", str(tmp_path / "ws")), ("case", "add", str(tmp_path / "ws"), str(MOVIES))):
        code, out, err = cli_runner(*command, "--database", "sqlite:///x.db")
        assert (code, out) == (2, "")
        assert err.endswith("Error: Invalid value for '--database': takes a PostgreSQL URL "
                            "(postgresql://user@host:5432/name); got 'sqlite:///x.db'; without it the workspace is "
                            "workspace.sqlite in the workspace folder\n")
        assert not (tmp_path / "ws").exists()


def test_serve_prints_the_url_with_the_token_and_serves(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([sys.executable, "-m", "gainscope", "serve", str(folder), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = process.stdout.readline().strip()
        token = (folder / "token").read_text().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith(f"/?token={token}")
        base = url.split("/?")[0]
        with urllib.request.urlopen(f"{base}/api/cases", timeout=30) as response:
            assert json.loads(response.read()) == []
        request = urllib.request.Request(f"{base}/api/scorers/x", method="PUT", data=b"{}",
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=30)
            raise AssertionError("a write without the token was accepted")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "serving workspace" in err


def test_the_listening_socket_says_it_is_tcp_so_answers_are_not_held_back() -> None:
    # asyncio sets TCP_NODELAY on accepted connections only when the listening socket's proto is IPPROTO_TCP; a
    # socket made with proto 0 left Nagle's algorithm on, and every small answer waited ~40 ms for a delayed ACK
    import asyncio.base_events
    import socket

    from gainscope.server.run import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        client = socket.create_connection(sock.getsockname())
        accepted, _ = sock.accept()
        asyncio.base_events._set_nodelay(accepted)  # what asyncio does to each accepted connection
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        accepted.close()
        client.close()
    finally:
        sock.close()
