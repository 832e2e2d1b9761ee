"""Templates: placeholders escaped for where they land (JSON string, JSON value, URL, text), and every mistake found
before anything is sent, with the engine, the key and the fix in the message."""

from __future__ import annotations

import json

import pytest

from gainscope.errors import EngineConfigError
from gainscope.search.templates import Context, Placeholder, as_text, parse, parse_value

KNOBS = ["title_boost", "k1", "fuzzy"]


def render(text: str, context: Context, values: dict, *, env: bool = False) -> str:
    template = parse(text, context, where="body", engine="shop", knobs=KNOBS, env_allowed=env)
    return template.render(lambda p: values[p.name])


def test_json_string_content_is_escaped_and_values_outside_strings_are_json_values() -> None:
    body = '{"query": {"match": {"title": "{{query}}"}}, "boost": {{title_boost}}, "fuzzy": {{fuzzy}}}'
    hostile = 'say "hi"\\ \n and }, "x": 1'
    out = render(body, Context.JSON, {"query": hostile, "title_boost": 2, "fuzzy": "AUTO"})
    data = json.loads(out)
    # the query stays inside its string, whatever it holds
    assert data["query"]["match"]["title"] == hostile
    assert data["boost"] == 2 and isinstance(data["boost"], int)
    assert data["fuzzy"] == "AUTO"  # a text outside quotes becomes a JSON string


def test_placeholder_inside_a_longer_string_and_escaped_quotes_before_it() -> None:
    body = '{"q": "title:\\"x\\" AND {{query}}", "n": {{k1}}}'
    out = render(body, Context.JSON, {"query": 'a"b', "k1": 1.5})
    assert json.loads(out) == {"q": 'title:"x" AND a"b', "n": 1.5}


def test_url_placeholders_are_percent_encoded_as_one_segment() -> None:
    out = render("http://h/{{query}}/_search?x={{k1}}", Context.URL, {"query": "a/b c?d&e", "k1": 0.5})
    assert out == "http://h/a%2Fb%20c%3Fd%26e/_search?x=0.5"


def test_text_writes_values_as_text() -> None:
    assert render("title^{{title_boost}} text", Context.TEXT, {"title_boost": 2.0}) == "title^2.0 text"
    assert [as_text(v) for v in (True, False, None, 3, 0.1, "x")] == ["true", "false", "", "3", "0.1", "x"]


def test_placeholder_kinds_and_spaces_inside_braces() -> None:
    template = parse('{{ query }} {{top}} {{k1}} {{opt.lang}} {{env.KEY}}', Context.TEXT, where="params.q",
                     engine="shop", knobs=KNOBS, env_allowed=True)
    assert [p.kind for p in template.placeholders] == ["query", "top", "knob", "opt", "env"]
    assert template.names == ("query", "top", "k1", "opt.lang", "env.KEY")
    assert Placeholder("opt", 0).kind == "knob"  # "opt" alone is not an option reference


@pytest.mark.parametrize(("text", "message"), [
    ('{"q": "{{query}"}', "engine 'shop': body has an unclosed '{{' at character 8 ('{\"q\": \"{{query}\"}'); "
                          "close it with '}}'"),
    ('{"q": "{{ 1x }}"}', "engine 'shop': body has a placeholder '{{ 1x }}' at character 8 that is not a name; use "
                          "{{query}}, {{top}}, a knob such as {{title_boost}}, {{opt.NAME}} or {{env.NAME}}"),
    ('{"b": {{titel_boost}}}', "engine 'shop': body uses {{titel_boost}}, which is not query, top, opt.NAME or a "
                               "knob; did you mean {{title_boost}}? Declare it under [engines.shop.knobs] (knobs: "
                               "title_boost, k1, fuzzy)"),
    ('{"q": "{{query}}', "engine 'shop': body has a JSON string that is never closed (an odd number of '\"'); it "
                         "must be a JSON document with placeholders"),
    ('{"q": "\\{{query}}"}', "engine 'shop': body has a backslash right before {{query}} "
                             "('{\"q\": \"\\\\{{query}}\"}'); the value is escaped for you, so remove the backslash"),
    ('{"k": "{{env.SECRET}}"}', "engine 'shop': body uses {{env.SECRET}}; environment variables (credentials) may be "
                                "used only in headers and params, so that they are never written into a snapshot's "
                                "URL or body"),
])
def test_template_errors_name_engine_key_and_fix(text: str, message: str) -> None:
    with pytest.raises(EngineConfigError) as caught:
        parse(text, Context.JSON, where="body", engine="shop", knobs=KNOBS)
    assert str(caught.value) == message


def test_non_finite_numbers_cannot_be_rendered() -> None:
    with pytest.raises(ValueError, match="inf is not a finite number"):
        render('{"b": {{k1}}}', Context.JSON, {"k1": float("inf")})


@pytest.mark.parametrize(("text", "value"), [
    ("2", 2), ("-3", -3), ("1.5", 1.5), ("1e3", 1000.0), ("true", True), ("false", False), ("null", None),
    ("AUTO", "AUTO"), ("title^2", "title^2"), (" 2 ", 2), ("0x10", "0x10"), ("", ""),
])
def test_parse_value_reads_numbers_booleans_and_null_else_text(text: str, value: object) -> None:
    parsed = parse_value(text)
    assert parsed == value and type(parsed) is type(value)
