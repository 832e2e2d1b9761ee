"""A judgment store that cannot be used (issue 13, item 15): random bytes, a text file, a truncated or damaged
store, another program's database, a read-only file or folder, a full disk. Each is exit 4 with one line naming
the store and what to do -- never an sqlite3 traceback -- and ``store info`` / ``store export`` read a read-only
store as it is (SQLite's ``mode=ro``)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.chat_server import FakeChatServer, Reply

from gainscope.errors import StoreError
from gainscope.io.texts import Document, Query
from gainscope.judges.labeling import LLMJudge, label_pairs
from gainscope.judges.prompts import BUILTIN
from gainscope.judges.spec import JudgeSpec
from gainscope.judges.store import JudgmentStore, PairKey, StoredLabel

Invoke = Callable[..., tuple[int, str, str]]


def labels(n: int) -> list[tuple[str, str, int]]:
    return [(f"q{i}", f"doc-{i:05d}-" + "x" * 40, i % 3) for i in range(n)]


def make_store(path: Path, n: int = 300) -> Path:
    """A store with ``n`` human labels (about 30 pages) and one LLM label; closed cleanly (no -wal left)."""
    with JudgmentStore(path) as store:
        store.import_human(labels(n), assessor="nist")
        store.register_judge("j1", {"model": "m", "prompt": {"name": "graded"}})
        store.record(StoredLabel(PairKey("j1", "q0", "qh", "d0", "dh"), "llm", "ok", 2))
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def texts(tmp_path: Path) -> dict[str, Path]:
    """One query, three documents, their pairs and a qrels file."""
    (tmp_path / "q.jsonl").write_text('{"query_id": "q1", "text": "a question"}\n', encoding="utf-8")
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"doc_id": f"d{i}", "text": f"[d{i}] grade={i}"}) + "\n"
                                              for i in range(3)), encoding="utf-8")
    (tmp_path / "pairs.txt").write_text("q1 d0\nq1 d1\nq1 d2\n", encoding="utf-8")
    (tmp_path / "h.qrels").write_text("q1 0 d0 1\n", encoding="utf-8")
    return {"queries": tmp_path / "q.jsonl", "corpus": tmp_path / "c.jsonl", "pairs": tmp_path / "pairs.txt",
            "qrels": tmp_path / "h.qrels"}


def judge(cli_runner: Invoke, texts: dict[str, Path], url: str, store: Path, *extra: str) -> tuple[int, str, str]:
    return cli_runner("judge", "--queries", str(texts["queries"]), "--corpus", str(texts["corpus"]), "--pairs",
                      str(texts["pairs"]), "--base-url", url, "--model", "m", "--store", str(store),
                      "--max-attempts", "1", *extra)


def every_command(cli_runner: Invoke, texts: dict[str, Path], url: str, store: Path) -> dict[str, tuple[int, str]]:
    """Exit code and standard error of judge, store info, store export and store import on ``store``."""
    runs = {
        "judge": judge(cli_runner, texts, url, store),
        "info": cli_runner("store", "info", str(store)),
        "export": cli_runner("store", "export", str(store), "--judge", "human:nist"),
        "import": cli_runner("store", "import", str(store), str(texts["qrels"])),
    }
    return {name: (code, err) for name, (code, _, err) in runs.items()}


# ---------------------------------------------------------------------------------------------- not a store
def random_bytes(path: Path) -> None:
    path.write_bytes(random.Random(0).randbytes(20_000))


def text_file(path: Path) -> None:
    path.write_text("q1 0 d1 1\nq1 0 d2 0\n", encoding="utf-8")  # e.g. qrels given as --store


def truncated(path: Path) -> None:
    data = make_store(path).read_bytes()
    path.write_bytes(data[: len(data) // 2])


def damaged_pages(path: Path) -> None:
    """The schema (page 1) intact, every other page overwritten: the damage shows at the first query."""
    data = bytearray(make_store(path).read_bytes())
    data[4096:] = random.Random(1).randbytes(len(data) - 4096)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("make", "says"), [
    (random_bytes, "not a judgment store: the file is not an SQLite database (file is not a database "
                   "[SQLITE_NOTADB]). Give the path of a store gainscope wrote, or a new file name to start an "
                   "empty store"),
    (text_file, "not a judgment store: the file is not an SQLite database"),
    (truncated, "the judgment store is damaged, e.g. truncated or overwritten (database disk image is malformed "
                "[SQLITE_CORRUPT]). Restore it from a backup, or save what is readable with `sqlite3 {path} "
                ".recover | sqlite3 recovered.sqlite` and use that file; a new file name starts an empty store"),
    (damaged_pages, "the judgment store is damaged"),
])
def test_a_file_that_is_not_a_usable_store_is_exit_4_naming_it(cli_runner, chat_server: FakeChatServer, texts,
                                                                tmp_path: Path, make, says: str) -> None:
    store = tmp_path / "s.sqlite"
    make(store)
    before = digest(store)
    for command, (code, err) in every_command(cli_runner, texts, chat_server.url, store).items():
        assert code == 4, (command, err)
        assert err.startswith(f"error: {store}: " + says.format(path=store)), (command, err)
        assert err.count("\n") == 1 and "Traceback" not in err, (command, err)
    assert chat_server.count() == 0
    assert digest(store) == before  # nothing was written into it


def test_every_command_that_keeps_labels_reports_a_broken_store_the_same_way(cli_runner, chat_server: FakeChatServer,
                                                                              tmp_path: Path) -> None:
    """The store's users outside `judge` (here temporal LLM mode) get the same error: it is raised in the store."""
    store = tmp_path / "labels.sqlite"
    text_file(store)
    records = tmp_path / "runs.jsonl"
    records.write_text(json.dumps({"query_id": "q1", "query": "Who won in 2020?", "retrieved": [
        {"doc_id": "a", "text": "About 2020. grade=2"}]}) + "\n", encoding="utf-8")
    code, _, err = cli_runner("temporal", "evaluate", str(records), "-m", "TemporalNDCG@1", "--mode", "llm",
                              "--base-url", chat_server.url, "--model", "m", "--store", str(store))
    assert code == 4 and err.startswith(f"error: {store}: not a judgment store: the file is not an SQLite database")
    assert chat_server.count() == 0


def test_another_programs_database_is_left_untouched(cli_runner, chat_server: FakeChatServer, texts,
                                                     tmp_path: Path) -> None:
    store = tmp_path / "app.sqlite"
    db = sqlite3.connect(store)
    db.execute("CREATE TABLE users (name TEXT)")
    db.commit()
    db.close()
    before = digest(store)
    for command, (code, err) in every_command(cli_runner, texts, chat_server.url, store).items():
        assert code == 4, (command, err)
        assert err == (f"error: {store}: an SQLite database of another program, not a judgment store (tables "
                       "users); it is left untouched. Give the path of a store gainscope wrote, or a new file name "
                       "to start an empty store\n"), command
    assert digest(store) == before  # no tables added, not even switched to WAL
    assert sqlite3.connect(store).execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_a_store_of_another_layout_and_an_empty_database(cli_runner, tmp_path: Path) -> None:
    other = tmp_path / "old.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE labels (judge TEXT, query_id TEXT, grade INTEGER)")
    db.commit()
    db.close()
    code, _, err = cli_runner("store", "info", str(other))
    assert code == 4 and "its table labels has the columns judge, query_id, grade, where judge, query_id, " in err
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    code, _, err = cli_runner("store", "info", str(empty))
    assert code == 4 and err == (f"error: {empty}: no judgment store in this file (an empty SQLite database); give "
                                 "the path of a store that `gainscope judge` wrote\n")
    code, out, _ = cli_runner("store", "import", str(empty), str(_qrels(tmp_path)))
    assert code == 0 and out == f"1 human labels stored in {empty}\n"  # an empty file may become a store


def _qrels(tmp_path: Path) -> Path:
    path = tmp_path / "one.qrels"
    path.write_text("q1 0 d1 2\n", encoding="utf-8")
    return path


def test_a_missing_folder_is_named(cli_runner, tmp_path: Path) -> None:
    store = tmp_path / "no" / "such" / "s.sqlite"
    code, _, err = cli_runner("store", "import", str(store), str(_qrels(tmp_path)))
    assert code == 4 and err == (f"error: {store}: cannot create the judgment store: there is no folder "
                                 f"{store.parent}; create it or give another path\n")


# ---------------------------------------------------------------------------------------------- read-only
def test_a_read_only_store_is_read_by_info_and_export_and_refused_for_writing(
        cli_runner, chat_server: FakeChatServer, texts, tmp_path: Path) -> None:
    store = make_store(tmp_path / "s.sqlite")
    store.chmod(0o444)
    before = digest(store)
    code, out, err = cli_runner("store", "info", str(store))
    assert code == 0, err
    assert out.splitlines() == ["human:nist  human  ok  300", "j1 (m, prompt graded)  llm  ok  1"]
    code, out, err = cli_runner("store", "export", str(store), "--judge", "human:nist")
    assert code == 0 and len(out.splitlines()) == 300 and out.startswith("q0 0 doc-00000-")
    # the permission bits are respected even by root (whom chmod does not stop): nothing is written
    message = (f"error: {store}: the judgment store is read-only (s.sqlite -r--r--r--{{more}}), so no label can be "
               f"added to it. Make it writable (chmod u+w {store}{{names}}) or work on a copy; reading it needs no "
               "write access (gainscope store info, store export)\n")
    for command in ("judge", "import"):
        code, err = every_command(cli_runner, texts, chat_server.url, store)[command]
        assert code == 4, err
        # the reads above left SQLite's -wal and -shm beside the store, with its permissions: named too
        assert err == message.format(more=", s.sqlite-wal -r--r--r--, s.sqlite-shm -r--r--r--",
                                     names=f" {store}-wal {store}-shm"), err
    assert digest(store) == before and chat_server.count() == 0
    with JudgmentStore(store, readonly=True) as ro, pytest.raises(StoreError, match=(
            r"s.sqlite: the judgment store was opened read-only and cannot be written \(attempt to write a readonly "
            r"database \[SQLITE_READONLY\]\)")):
        ro.register_judge("j2", {})


def _unprivileged() -> list[str] | None:
    """How to run a command as a user that file permissions apply to: as is when not root; as nobody when root
    and nobody can import gainscope from here; else None."""
    if os.geteuid() != 0:
        return []
    probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                            "import gainscope"], capture_output=True, cwd="/")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if probe.returncode == 0 else None


@pytest.fixture
def read_only_folder() -> Iterator[Path]:
    """A folder outside pytest's private tmp (so another user can enter it), made read-only by the test."""
    root = Path(tempfile.mkdtemp(prefix="gainscope-ro-"))
    root.chmod(0o755)
    folder = root / "store"
    folder.mkdir()
    yield folder
    folder.chmod(0o755)
    for f in folder.iterdir():
        f.chmod(0o644)
    for f in [*folder.iterdir(), folder]:
        f.unlink() if f.is_file() else f.rmdir()
    root.rmdir()


def test_a_store_in_a_read_only_folder_as_a_user_that_permissions_stop(read_only_folder: Path) -> None:
    """The real case, not an emulation: SQLite cannot create its -shm index beside the store, so ``mode=ro``
    alone fails (SQLITE_READONLY_DIRECTORY); the store is then read as immutable, which is exact because there
    is no -wal content. With -wal content that could not be read, the read is refused."""
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root and user nobody cannot import gainscope from this checkout")
    store = make_store(read_only_folder / "s.sqlite")
    store.chmod(0o444)
    read_only_folder.chmod(0o555)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*prefix, sys.executable, "-m", "gainscope", *args], capture_output=True, text=True,
                              cwd="/")

    info = run("store", "info", str(store))
    assert info.returncode == 0, info.stderr
    assert info.stdout.splitlines()[0] == "human:nist  human  ok  300"
    export = run("store", "export", str(store), "--judge", "j1")
    assert export.returncode == 0 and export.stdout == "q0 0 d0 2\n", export.stderr
    qrels = read_only_folder.parent / "h.qrels"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    qrels.chmod(0o644)
    imported = run("store", "import", str(store), str(qrels))
    assert imported.returncode == 4 and "the judgment store is read-only" in imported.stderr
    assert "Traceback" not in imported.stderr
    assert sorted(p.name for p in read_only_folder.iterdir()) == ["s.sqlite"]  # nothing written beside it
    qrels.unlink()


def test_unmerged_labels_in_a_read_only_folder_are_not_silently_missed(read_only_folder: Path) -> None:
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root and user nobody cannot import gainscope from this checkout")
    source = read_only_folder.parent / "live.sqlite"
    with JudgmentStore(source) as live:  # open: its last labels are in the -wal, not yet in the file
        live.import_human(labels(5), assessor="nist")
        for suffix in ("", "-wal"):
            copy = read_only_folder / f"s.sqlite{suffix}"
            copy.write_bytes(Path(f"{source}{suffix}").read_bytes())
            copy.chmod(0o444)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{source}{suffix}").unlink(missing_ok=True)
    read_only_folder.chmod(0o555)
    store = read_only_folder / "s.sqlite"
    done = subprocess.run([*prefix, sys.executable, "-m", "gainscope", "store", "info", str(store)],
                          capture_output=True, text=True, cwd="/")
    assert done.returncode == 4, done.stdout
    assert done.stderr.startswith(f"error: {store}: cannot read the judgment store here (")
    assert done.stderr.endswith("this folder is not writable, and s.sqlite-wal holds labels not yet merged into the "
                                "store. Open it once where its folder is writable (or copy the store and its -wal "
                                "file to a writable folder)\n")


# ---------------------------------------------------------------------------------------------- full disk
def test_a_full_disk_mid_run_is_exit_4_and_keeps_the_labels_recorded(cli_runner, chat_server: FakeChatServer,
                                                                     texts, tmp_path: Path, monkeypatch) -> None:
    """SQLITE_FULL as a full disk gives it, from SQLite's page limit (robust anywhere, unlike mounting a tiny
    file system): each answer is ~6 kB, so the store takes a label or two of the three, not all."""
    long = "y" * 3000
    chat_server.behaviour = lambda body, attempt: Reply("text", text=json.dumps({"grade": 1, "reasoning": long}))
    store = tmp_path / "s.sqlite"
    opened = JudgmentStore._open

    def small_disk(self: JudgmentStore) -> sqlite3.Connection:
        db = opened(self)
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages + 3}")
        return db

    with monkeypatch.context() as m:
        m.setattr(JudgmentStore, "_open", small_disk)
        code, out, err = judge(cli_runner, texts, chat_server.url, store, "--concurrency", "1")
    assert code == 4, out
    assert err == (f"error: {store}: no space left to write the judgment store (database or disk is full "
                   "[SQLITE_FULL]). Free disk space or move the store to another disk, then run again: the labels "
                   "recorded so far are kept and are not asked for again\n")
    with JudgmentStore(store, readonly=True) as kept:
        recorded = [lb.key.doc_id for lb in kept.labels() if lb.status == "ok"]
    assert 1 <= len(recorded) < 3 and chat_server.count() == len(recorded) + 1  # the last answer could not be stored
    code, out, err = judge(cli_runner, texts, chat_server.url, store)  # space again
    assert code == 0, err
    assert f"{3 - len(recorded)} judged now, {len(recorded)} from the store" in out
    assert chat_server.count() == 4  # only the answer that could not be stored was asked for twice


def test_a_write_the_operating_system_refuses_is_exit_4(tmp_path: Path) -> None:
    """A real failing write(2): a file size limit (RLIMIT_FSIZE; Python ignores SIGXFSZ, so write fails with
    EFBIG), which SQLite reports as a disk I/O error."""
    qrels = tmp_path / "big.qrels"
    qrels.write_text("".join(f"q{i} 0 doc-{i:06d}-{'z' * 60} 1\n" for i in range(3000)), encoding="utf-8")
    store = tmp_path / "s.sqlite"
    limited = ("import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536)); "
               "sys.argv = ['gainscope', *sys.argv[1:]]; runpy.run_module('gainscope', run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", limited, "store", "import", str(store), str(qrels)],
                          capture_output=True, text=True)
    assert done.returncode == 4, done.stderr
    assert done.stderr == (f"error: {store}: the judgment store could not be read or written (disk I/O error "
                           "[SQLITE_IOERR_WRITE]). Check the disk: free space, a file size limit (ulimit -f), a "
                           "device removed or unmounted; labels recorded before are kept\n")


@dataclass
class Answer:
    text: str
    prompt_tokens: int = 10
    completion_tokens: int = 5


def test_a_store_failure_stops_the_other_workers_at_once(tmp_path: Path, monkeypatch) -> None:
    """When one worker cannot record its label, the others are cancelled before the error goes on: no request
    keeps running (and being paid for) while the command closes the store."""
    cancelled: list[str] = []

    class Client:
        async def complete(self, model: str, messages: list[dict[str, str]], **kwargs: object) -> Answer:
            if "[slow]" in messages[-1]["content"]:
                try:
                    await asyncio.sleep(3600)
                except asyncio.CancelledError:
                    cancelled.append("slow")
                    raise
            return Answer('{"grade": 1}')

    def full(label: StoredLabel) -> bool:
        raise StoreError("s.sqlite: no space left", path="s.sqlite")

    docs = {d: Document(d, f"[{d}] text") for d in ("slow", "fast")}
    judge_ = LLMJudge(JudgeSpec("m", BUILTIN["graded"]), Client())

    async def run(store: JudgmentStore) -> list[str]:
        with pytest.raises(StoreError, match="no space left"):
            await label_pairs([("q1", "slow"), ("q1", "fast")], {"q1": Query("q1", "q")}, docs, judge=judge_,
                              store=store, workers=2)
        return list(cancelled)  # as the error arrives, not after asyncio.run() tidies up

    with JudgmentStore(tmp_path / "s.sqlite") as store:
        monkeypatch.setattr(store, "record", full)
        assert asyncio.run(run(store)) == ["slow"]
