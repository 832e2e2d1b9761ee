"""Readers: the native format (validation with file:line), OpenAI chat messages, OpenAI Responses items and
OpenTelemetry GenAI spans, each on a realistic sample, and format detection."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.helpers import write_jsonl

from gainscope.agents import ResultMapping, read_conversations, read_traces, write_traces
from gainscope.agents.readers import detect_trace_format
from gainscope.agents.trace import RESULT_FIELDS, schema
from gainscope.errors import FileAccessError, FormatError, InputError, InputWarning, PolicyError, UnknownFormatError

# ------------------------------------------------------------------------------------------------ native
NATIVE = {"conversation_id": "c1", "query_id": "q1", "turns": [{"query": "who wrote it?", "iterations": [
    {"searches": [{"query": "author", "tool": "web_search", "results": [
        {"id": "r1", "url": "https://a.org", "title": "A", "snippet": "s", "gain": 3},
        {"domain_id": "pmid:9", "content": "text", "metadata": {"score": 0.4}}]}]}]}]}


def test_native_round_trip(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path, "t.jsonl", [NATIVE, {"conversation_id": 7, "turns": []}])
    convs = read_traces(src)
    assert [c.conversation_id for c in convs] == ["c1", "7"] and convs[0].qid == "q1" and convs[1].qid == "7"
    r = convs[0].last_turn.iterations[0].searches[0].results
    assert (r[0].gain, r[1].domain_id, r[1].metadata) == (3, "pmid:9", {"score": 0.4})
    out = tmp_path / "back.jsonl"
    assert write_traces(convs, out) == 2
    assert json.loads(out.read_text().splitlines()[0]) == NATIVE


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "t.jsonl:2: not JSON"),
    ({"turns": []}, "t.jsonl:2: missing 'conversation_id'"),
    ({"conversation_id": "c2", "turns": [{"iterations": [{"searches": [{"results": [{"gain": 3}]}]}]}]},
     "t.jsonl:2: turns\\[0\\].iterations\\[0\\].searches\\[0\\].results\\[0\\]: a result needs at least one of id, "
     "domain_id, url, title, snippet, content"),
    ({"conversation_id": "c2", "turns": [{"iterations": [{"searches": [{"results": [{"id": "x", "gain": 5}]}]}]}]},
     "'gain' must be an integer 0-4; got 5"),
    ({"conversation_id": "c2", "turns": [{"iterations": [{"searches": [{"results": [{"id": "x", "snipet": ""}]}]}]}]},
     "unknown key 'snipet'"),
    ({"conversation_id": "c1", "turns": []}, "t.jsonl:2: conversation 'c1' was already given on line 1"),
    ({"conversation_id": "c2", "turns": {}}, "'turns' must be an array; got an object"),
])
def test_native_errors_name_file_line_and_place(tmp_path: Path, line: object, message: str) -> None:
    src = write_jsonl(tmp_path, "t.jsonl", [NATIVE, line])
    with pytest.raises(FormatError, match=message):
        read_traces(src)


def test_schema_matches_the_reader() -> None:
    s = schema()
    result = s["$defs"]["result"]
    assert set(result["properties"]) == {*RESULT_FIELDS, "gain", "metadata"}
    assert [a["required"][0] for a in result["anyOf"]] == list(RESULT_FIELDS)
    assert result["properties"]["gain"] == {**result["properties"]["gain"], "minimum": 0, "maximum": 4}
    assert s["required"] == ["conversation_id", "turns"] and s["additionalProperties"] is False


# ------------------------------------------------------------------------------------------------ chat
def _call(cid: str, name: str, args: dict[str, object]) -> dict[str, object]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


CHAT = {"conversation_id": "chat-1", "messages": [
    {"role": "system", "content": "You are a research assistant."},
    {"role": "user", "content": "What is the boiling point of water on Everest?"},
    {"role": "assistant", "content": None, "tool_calls": [
        _call("call_a", "web_search", {"query": "boiling point water everest"}),
        _call("call_b", "web_search", {"query": "atmospheric pressure everest summit"})]},
    {"role": "tool", "tool_call_id": "call_a", "content": json.dumps({"results": [
        {"title": "Boiling point at altitude", "link": "https://www.example.com/boil?utm_source=bing",
         "snippet": "About 70 °C at the summit."},
        {"title": "Everest facts", "link": "https://facts.org/everest", "snippet": "8,849 m."}]})},
    {"role": "tool", "tool_call_id": "call_b", "content": [{"type": "text", "text": json.dumps({"results": [
        {"title": "Pressure on Everest", "link": "https://facts.org/everest/", "snippet": "About 34 kPa."}]})}]},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_c", "get_time", {}),
                                                           _call("call_d", "web_search", {"q": "70 C boiling"})]},
    {"role": "tool", "tool_call_id": "call_c", "content": "12:00"},
    {"role": "tool", "tool_call_id": "call_d", "content": "[]"},
    {"role": "assistant", "content": "About 70 °C."},
    {"role": "user", "content": "And on Mont Blanc?"},
    {"role": "assistant", "content": "About 85 °C."},
]}


def test_openai_chat(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path, "chat.jsonl", [CHAT])
    assert detect_trace_format(src) == "openai-chat"
    (conv,) = read_conversations(src)
    assert conv.conversation_id == "chat-1" and len(conv.turns) == 2
    first = conv.turns[0]
    assert first.query == "What is the boiling point of water on Everest?"
    # two assistant steps with searches; the parallel calls are one iteration; get_time is not a search
    assert [len(it.searches) for it in first.iterations] == [2, 1]
    s1, s2 = first.iterations[0].searches
    assert (s1.query, s1.tool, s2.query) == ("boiling point water everest", "web_search",
                                             "atmospheric pressure everest summit")
    assert s1.results[0].url == "https://www.example.com/boil?utm_source=bing"
    assert s1.results[0].snippet == "About 70 °C at the summit." and s2.results[0].title == "Pressure on Everest"
    assert first.iterations[1].searches[0].query == "70 C boiling" and first.iterations[1].searches[0].results == ()
    assert conv.last_turn.query == "And on Mont Blanc?" and conv.last_turn.iterations == ()


def test_openai_chat_mapping(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "tool_calls": [_call("c1", "kb_lookup", {"question": "q"})]},
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps(
                    {"data": {"hits": [{"_source": {"docid": "D1", "body": "x"}}, {"_source": {"docid": "D2"}}]}})}]
    src = write_jsonl(tmp_path, "chat.jsonl", [messages])
    mapping = ResultMapping(search_tools=("kb_lookup",), results_path="$.data.hits[*]._source",
                            fields={"domain_id": "docid", "content": "body"})
    (conv,) = read_conversations(src, "openai-chat", mapping=mapping)
    results = conv.last_turn.iterations[0].searches[0].results
    assert [(r.domain_id, r.content, r.id) for r in results] == [("D1", "x", None), ("D2", None, None)]
    assert conv.conversation_id == "chat:1" and conv.last_turn.iterations[0].searches[0].query == "q"
    with pytest.raises(FormatError, match=re.escape("chat.jsonl:1: messages[2] (result of c1): no list of results")):
        read_conversations(src, "openai-chat", mapping=ResultMapping(search_tools=("kb_lookup",)))
    with pytest.raises(PolicyError, match="cannot read the JSON path"):
        ResultMapping(results_path="$.data..hits")


def test_openai_chat_errors(tmp_path: Path) -> None:
    no_result = [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [_call("c9", "search", {})]}]
    with pytest.raises(FormatError, match=re.escape("c.jsonl:1: messages[1].tool_calls[0]: the search call 'c9' "
                                                    "has no tool message")):
        read_conversations(write_jsonl(tmp_path, "c.jsonl", [no_result]), "openai-chat")
    text = [*no_result, {"role": "tool", "tool_call_id": "c9", "content": "Top result: example.com"}]
    with pytest.raises(FormatError, match="the tool output is not JSON"):
        read_conversations(write_jsonl(tmp_path, "c.jsonl", [text]), "openai-chat")


def test_gains_in_tool_outputs_are_read_with_a_gain_key(tmp_path: Path) -> None:
    output = {"results": [{"url": "https://a.org", "gain": 3}, {"url": "https://b.org", "meta": {"label": 1.0}},
                          {"url": "https://c.org", "gain": None}]}
    chat = [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [_call("c1", "search", {})]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(output)}]
    items = [{"type": "function_call", "call_id": "f1", "name": "search", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "f1", "output": json.dumps(output)}]
    span = {"name": "retrieval", "trace_id": "t", "span_id": "s", "start_time": 1,
            "attributes": {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": output["results"]}}
    files = {"openai-chat": write_jsonl(tmp_path, "chat.jsonl", [chat]),
             "openai-responses": write_jsonl(tmp_path, "r.jsonl", [items]),
             "otel": write_jsonl(tmp_path, "spans.jsonl", [span])}
    for fmt, src in files.items():
        # without a gain key the gains are not read: such traces need judgments or a judge
        (conv,) = read_conversations(src, fmt)
        assert [r.gain for r in conv.last_turn.iterations[0].searches[0].results] == [None, None, None], fmt
        (conv,) = read_conversations(src, fmt, mapping=ResultMapping(gain="gain"))
        assert [r.gain for r in conv.last_turn.iterations[0].searches[0].results] == [3, None, None], fmt
        (conv,) = read_conversations(src, fmt, mapping=ResultMapping(gain="meta.label"))
        assert [r.gain for r in conv.last_turn.iterations[0].searches[0].results] == [None, 1, None], fmt
    bad = [*chat[:2], {"role": "tool", "tool_call_id": "c1", "content": json.dumps([{"url": "u", "gain": 7}])}]
    with pytest.raises(FormatError, match=re.escape("bad.jsonl:1: messages[2] (result of c1): result 0: the "
                                                    "gain (key gain) must be an integer 0-4; got 7")):
        read_conversations(write_jsonl(tmp_path, "bad.jsonl", [bad]), "openai-chat", mapping=ResultMapping(gain="gain"))


# ------------------------------------------------------------------------------------------------ responses
RESPONSES = {"id": "resp_67c9", "object": "response", "input": "Latest Mars rover findings?", "output": [
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "web_search_call", "id": "ws_1", "status": "completed",
     "action": {"type": "search", "query": "mars rover findings 2025",
                "sources": [{"type": "url", "url": "https://science.nasa.gov/mission/mars-2020-perseverance/"},
                            {"type": "url", "url": "https://www.nature.com/articles/x1"}]}},
    {"type": "reasoning", "id": "rs_2", "summary": []},
    {"type": "web_search_call", "id": "ws_2", "status": "completed",
     "action": {"type": "open_page", "url": "https://www.nature.com/articles/x1"}},
    {"type": "web_search_call", "id": "ws_3", "status": "completed",
     "action": {"type": "search", "queries": ["perseverance sample", "cheyava falls"],
                "sources": [{"type": "url", "url": "https://science.nasa.gov/mission/mars-2020-perseverance"}]}},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Perseverance found...", "annotations": []}]},
]}

ITEMS = {"conversation_id": "agent-7", "query_id": "Q7", "items": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Find papers on RAG eval"}]},
    {"type": "function_call", "call_id": "call_1", "name": "search_papers", "arguments": '{"query": "rag eval"}'},
    {"type": "function_call", "call_id": "call_2", "name": "search_papers", "arguments": '{"query": "llm judges"}'},
    {"type": "function_call_output", "call_id": "call_1",
     "output": json.dumps([{"paper_id": "2404.1", "title": "RAG eval"}, {"paper_id": "2309.2", "title": "Judges"}])},
    {"type": "function_call_output", "call_id": "call_2", "output": json.dumps([{"paper_id": "2309.2"}])},
    {"type": "file_search_call", "id": "fs_1", "status": "completed", "queries": ["rag eval notes"],
     "results": [{"file_id": "file-1", "filename": "notes.pdf", "score": 0.8, "text": "notes on rag"}]},
]}


def test_openai_responses(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path, "resp.jsonl", [RESPONSES, ITEMS])
    assert detect_trace_format(src) == "openai-responses"
    mapping = ResultMapping(search_tools=("search_papers",), fields={"domain_id": "paper_id"})
    hosted, agent = read_conversations(src, mapping=mapping)
    assert hosted.conversation_id == "resp_67c9" and hosted.last_turn.query == "Latest Mars rover findings?"
    # reasoning between the two searches: two iterations; open_page is not a search but continues the run
    its = hosted.last_turn.iterations
    assert [len(it.searches) for it in its] == [1, 1]
    assert its[0].searches[0].query == "mars rover findings 2025"
    assert its[1].searches[0].query == "perseverance sample | cheyava falls"
    assert [r.url for r in its[0].searches[0].results][1] == "https://www.nature.com/articles/x1"
    assert (agent.conversation_id, agent.qid, agent.last_turn.query) == ("agent-7", "Q7", "Find papers on RAG eval")
    # the two parallel function calls are one iteration; the file search after the outputs is another
    its = agent.last_turn.iterations
    assert [[s.tool for s in it.searches] for it in its] == [["search_papers", "search_papers"], ["file_search"]]
    assert [r.domain_id for r in its[0].searches[0].results] == ["2404.1", "2309.2"]
    assert (its[1].searches[0].results[0].id, its[1].searches[0].results[0].title) == ("file-1", "notes.pdf")


def test_responses_without_sources_warn(tmp_path: Path) -> None:
    item = {"type": "web_search_call", "id": "ws_9", "status": "completed", "action": {"type": "search", "query": "x"}}
    src = write_jsonl(tmp_path, "r.jsonl", [[item]])
    with pytest.warns(InputWarning, match="ws_9.*no action.sources"):
        (conv,) = read_conversations(src, "openai-responses")
    assert conv.last_turn.iterations[0].searches[0].results == ()


def test_responses_sources_without_url_are_kept_by_type_and_name(tmp_path: Path) -> None:
    # the API lists non-web sources (an internal weather API) as {"type": "api", "name": ...}, without a url
    response = {"id": "resp_w", "object": "response", "input": "weather in mexico city and news", "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "weather: Mexico, Mexico City",
                    "sources": [{"type": "api", "name": "oai-weather"}]}},
        {"type": "web_search_call", "id": "ws_2", "status": "completed",
         "action": {"type": "search", "queries": ["mexico city news"],
                    "sources": [{"type": "url", "url": "https://www.example.com/news/"},
                                {"type": "api", "name": "oai-weather"}, {"type": "api"}, "junk"]}},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "..."}]}]}
    src = write_jsonl(tmp_path, "resp.jsonl", [response])
    with pytest.warns(InputWarning) as caught:
        (conv,) = read_conversations(src)
    searches = [s for it in conv.last_turn.iterations for s in it.searches]
    assert [[(r.id, r.url) for r in s.results] for s in searches] == [
        [("api:oai-weather", None)], [(None, "https://www.example.com/news/"), ("api:oai-weather", None)]]
    # a source that nothing identifies is skipped, with a warning naming the file, the line and the place
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert messages[0].startswith(f"{src}:1: items[3] (web_search_call ws_2): action.sources[2]")
    assert "neither url nor name; skipped" in messages[0] and "action.sources[3]" in messages[1]


# ------------------------------------------------------------------------------------------------ otel
def _attrs(**kv: object) -> list[dict[str, object]]:
    out = []
    for k, v in kv.items():
        key = k.replace("__", ".")
        value = {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}
        out.append({"key": key, "value": value})
    return out


T0 = 1_700_000_000_000_000_000


def _span(sid: str, parent: str | None, start: int, **attrs: object) -> dict[str, object]:
    return {"traceId": "5b8aa5a2d2c872e8321cf37308d69df2", "spanId": sid, "parentSpanId": parent or "",
            "name": str(attrs.get("gen_ai__operation__name")), "kind": 3,
            "startTimeUnixNano": str(T0 + start), "endTimeUnixNano": str(T0 + start + 5),
            "attributes": _attrs(**attrs)}


DOCS_1 = json.dumps([{"id": "kb-12", "score": 0.91, "content": "Refunds within 30 days."},
                     {"id": "kb-40", "score": 0.55}])
DOCS_2 = json.dumps([{"id": "kb-12", "score": 0.88}, {"id": "kb-77", "score": 0.7, "metadata": {"url": "https://h/x"}}])
OTLP = {"resourceSpans": [{"resource": {"attributes": _attrs(service__name="support-agent")}, "scopeSpans": [{
    "scope": {"name": "agent"}, "spans": [
        _span("a0", None, 0, gen_ai__operation__name="invoke_agent", gen_ai__conversation__id="conv-42",
              gen_ai__input__messages=json.dumps([{"role": "user", "parts": [{"type": "text",
                                                                              "content": "refund policy?"}]}])),
        _span("c1", "a0", 10, gen_ai__operation__name="chat", gen_ai__request__model="gpt-4o"),
        _span("t1", "a0", 20, gen_ai__operation__name="execute_tool", gen_ai__tool__name="search",
              gen_ai__tool__call__id="call_1"),
        _span("r1", "t1", 21, gen_ai__operation__name="retrieval", gen_ai__data_source__id="kb",
              gen_ai__retrieval__query__text="refund policy", gen_ai__retrieval__documents=DOCS_1),
        _span("r2", "a0", 22, gen_ai__operation__name="retrieval", gen_ai__data_source__id="kb",
              gen_ai__retrieval__query__text="returns", gen_ai__retrieval__documents=DOCS_2),
        _span("c2", "a0", 30, gen_ai__operation__name="chat", gen_ai__request__model="gpt-4o"),
        _span("t2", "a0", 40, gen_ai__operation__name="execute_tool", gen_ai__tool__name="web_search",
              gen_ai__tool__call__arguments='{"query": "refund law"}',
              gen_ai__tool__call__result='{"results": [{"url": "https://law.gov/refunds"}]}'),
        _span("c3", "a0", 50, gen_ai__operation__name="chat", gen_ai__request__model="gpt-4o"),
    ]}]}]}


def test_otel_spans(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path, "spans.jsonl", [OTLP])
    assert detect_trace_format(src) == "otel"
    (conv,) = read_conversations(src)
    assert conv.conversation_id == "conv-42" and conv.last_turn.query == "refund policy?"
    its = conv.last_turn.iterations
    # step 1 (chat c1): the tool span holding retrieval r1 is not counted twice, r2 is a second search
    assert [[s.query for s in it.searches] for it in its] == [["refund policy", "returns"], ["refund law"]]
    assert [r.id for r in its[0].searches[0].results] == ["kb-12", "kb-40"]
    assert its[0].searches[0].results[0].content == "Refunds within 30 days."
    assert its[0].searches[1].results[1].url == "https://h/x" and its[0].searches[0].tool == "kb"
    assert its[1].searches[0].results[0].url == "https://law.gov/refunds"


def test_otel_model_calls_inside_tools_do_not_open_iterations(tmp_path: Path) -> None:
    # one model step (chat c1) issues a retrieval and two parallel search tools; tool t1 rewrites its query
    # with its own chat span before retrieving: that chat is part of the tool, not a new assistant step
    def span(sid: str, parent: str | None, start: int, op: str, **attrs: object) -> dict[str, object]:
        return {"name": op, "trace_id": "t", "span_id": sid, "parent_id": parent, "start_time": T0 + start,
                "attributes": {"gen_ai.operation.name": op, **attrs}}

    def docs(doc: str) -> dict[str, object]:
        return {"gen_ai.retrieval.documents": [{"id": doc, "score": 1}]}

    spans = [span("a", None, 0, "invoke_agent", **{"gen_ai.conversation.id": "c"}),
             span("c1", "a", 10, "chat"),
             span("r0", "a", 15, "retrieval", **docs("d0")),
             span("t1", "a", 20, "execute_tool", **{"gen_ai.tool.name": "search"}),
             span("t1c", "t1", 21, "chat"),
             span("t1r", "t1", 22, "retrieval", **docs("d1")),
             span("t2", "a", 23, "execute_tool", **{"gen_ai.tool.name": "search"}),
             span("t2r", "t2", 24, "retrieval", **docs("d2")),
             span("c2", "a", 30, "chat"),  # the answer: a step without a search
             span("r3", "a", 35, "retrieval", **docs("d3")),
             span("r3c", "r3", 36, "text_completion")]  # a model call inside a retrieval (a reranker)
    (conv,) = read_conversations(write_jsonl(tmp_path, "nested.jsonl", [*spans]), "otel")
    assert [[[r.id for r in s.results] for s in it.searches] for it in conv.last_turn.iterations] == [
        [["d0"], ["d1"], ["d2"]], [["d3"]]]


def test_otel_console_exporter_objects(tmp_path: Path) -> None:
    # the Python SDK's ConsoleSpanExporter prints pretty JSON objects one after another
    spans = [{"name": "chat gpt-4o", "context": {"trace_id": "0xabc", "span_id": "0x1"}, "parent_id": None,
              "start_time": "2025-05-01T10:00:00.000000Z", "attributes": {"gen_ai.operation.name": "chat"}},
             {"name": "retrieval kb", "context": {"trace_id": "0xabc", "span_id": "0x2"}, "parent_id": None,
              "start_time": "2025-05-01T10:00:01.000000Z",
              "attributes": {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": "q",
                             "gen_ai.retrieval.documents": [{"id": "d1", "score": 1.0}]}},
             {"name": "retrieval kb", "context": {"trace_id": "0xabc", "span_id": "0x3"}, "parent_id": None,
              "start_time": "2025-05-01T10:00:02.000000Z",
              "attributes": {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": "q2"}}]
    src = tmp_path / "console.json"
    src.write_text("\n".join(json.dumps(s, indent=4) for s in spans), encoding="utf-8")
    with pytest.warns(InputWarning, match="no gen_ai.retrieval.documents"):
        (conv,) = read_conversations(src, "otel")
    assert conv.conversation_id == "0xabc"
    (it,) = conv.last_turn.iterations
    assert [s.query for s in it.searches] == ["q", "q2"] and it.searches[0].results[0].id == "d1"


def test_otel_bad_documents_name_the_line(tmp_path: Path) -> None:
    bad = {"name": "retrieval kb", "trace_id": "t", "span_id": "s", "start_time": 5,
           "attributes": {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": "[{\"score\": 1}]"}}
    src = write_jsonl(tmp_path, "bad.jsonl", [{"name": "x", "trace_id": "t", "span_id": "s0", "attributes": {}}, bad])
    with pytest.raises(FormatError, match=re.escape("bad.jsonl:2: retrieval span s (retrieval kb): result 0: a "
                                                    "result without id")):
        read_conversations(src, "otel")


def test_tool_calls_none_of_them_a_search_are_refused(tmp_path: Path) -> None:
    # the agent's search tool is kb_lookup, which is not a default search tool: read as it was, every
    # conversation had N = 0 and the evaluation was a table of zeros
    chat = write_jsonl(tmp_path, "chat.jsonl", [[
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [_call("c1", "kb_lookup", {"query": "q"}), _call("c2", "get_time", {})]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps([{"id": "D1"}])},
        {"role": "tool", "tool_call_id": "c2", "content": "12:00"}]])
    defaults = "search, web_search, search_web, retrieve, retrieval, file_search, search_documents, vector_search"
    with pytest.raises(InputError) as info:
        read_conversations(chat)
    assert str(info.value) == (
        f"{chat}: no tool call is a search, so no conversation would have a search iteration: the tools called are "
        f"get_time, kb_lookup, and the search tools are {defaults}; name the search tool with --search-tool NAME "
        "(search_tools=('NAME',) of ResultMapping in Python)")
    (conv,) = read_conversations(chat, mapping=ResultMapping(search_tools=("kb_lookup",)))
    assert len(conv.last_turn.search_iterations()) == 1
    # no tool called at all: what the agent did, read as it is
    (conv,) = read_conversations(write_jsonl(tmp_path, "plain.jsonl", [[{"role": "user", "content": "q"},
                                                                 {"role": "assistant", "content": "a"}]]))
    assert conv.last_turn.search_iterations() == ()
    items = [item for item in ITEMS["items"] if item["type"] != "file_search_call"]  # type: ignore[index, union-attr]
    responses = write_jsonl(tmp_path, "resp.jsonl", [{"conversation_id": "agent-7", "items": items}])
    with pytest.raises(InputError, match=r"resp\.jsonl: no tool call is a search, .*the tools called are "
                                         r"search_papers, and .*--search-tool search_papers"):
        read_conversations(responses)
    spans = {"resourceSpans": [{"scopeSpans": [{"spans": [
        _span("a0", None, 0, gen_ai__operation__name="invoke_agent"),
        _span("c1", "a0", 10, gen_ai__operation__name="chat"),
        _span("t1", "a0", 20, gen_ai__operation__name="execute_tool", gen_ai__tool__name="docs_lookup",
              gen_ai__tool__call__result='[{"id": "x"}]')]}]}]}
    with pytest.raises(InputError, match=r"spans\.jsonl: no tool call is a search, .*the tools called are "
                                         r"docs_lookup, and"):
        read_conversations(write_jsonl(tmp_path, "spans.jsonl", [spans]))


def test_detection_failures(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=re.escape("x.jsonl:1: not JSON (Expecting value at column 1)")):
        detect_trace_format(write_jsonl(tmp_path, "x.jsonl", ["hello"]))
    with pytest.raises(UnknownFormatError, match="cannot tell the trace format"):
        detect_trace_format(write_jsonl(tmp_path, "y.jsonl", [{"foo": 1}]))
    with pytest.raises(FileAccessError, match="no such file"):  # an I/O failure: exit 4
        read_conversations(tmp_path / "missing.jsonl")


def test_detection_names_the_line_like_the_readers(tmp_path: Path) -> None:
    # a malformed first conversation: the same file:line message as the native reader gives
    bad = write_jsonl(tmp_path, "bad.jsonl", ["", '{"conversation_id": "b", turns}', NATIVE])
    message = "bad.jsonl:2: not JSON (Expecting property name enclosed in double quotes at column 26)"
    with pytest.raises(FormatError, match=re.escape(message)):
        read_conversations(bad)
    with pytest.raises(FormatError, match=re.escape(message)):
        read_conversations(bad, "native")
    # a pretty-printed value: the line inside it where the JSON breaks
    pretty = tmp_path / "pretty.json"
    pretty.write_text('{\n  "name": "chat",\n  "context": {"trace_id": 1,}\n}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=re.escape("pretty.json:3: not JSON (")):
        detect_trace_format(pretty)
    blank = write_jsonl(tmp_path, "blank.jsonl", ["", "   ", ""])
    with pytest.raises(InputError, match=re.escape("blank.jsonl: no trace in file (it is empty or blank)")):
        read_conversations(blank)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"conversation_id": "caf\xe9", "turns": []}\n')
    with pytest.raises(FormatError, match=re.escape("latin.jsonl: not UTF-8 (byte 24)")):
        read_conversations(latin)
    # a BOM is not an error
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(NATIVE).encode() + b"\n")
    assert detect_trace_format(bom) == "native"
