"""URL and text normalisation, the two phases of de-duplication, near-duplicates, and the explanation of every
decision."""

from __future__ import annotations

import pytest

from gainscope.agents import DedupSettings, Iteration, Result, Search, UrlPolicy, deduplicate, explain, normalise_url
from gainscope.agents.fingerprints import hamming, normalise_text, simhash, simhash_bands
from gainscope.errors import PolicyError


@pytest.mark.parametrize(("given", "expected"), [
    ("HTTP://WWW.Example.COM:80/a/b/?utm_source=x&b=2&a=1#frag", "https://example.com/a/b?a=1&b=2"),
    ("example.com/a/?gclid=1&fbclid=2&mc_eid=3", "https://example.com/a"),
    ("https://example.com:443", "https://example.com/"),
    ("https://example.com:8443/x/", "https://example.com:8443/x"),
    ("https://x.org/p?UTM_Campaign=1&q=a%20b", "https://x.org/p?q=a+b"),
    ("https://bücher.de/ü", "https://xn--bcher-kva.de/%C3%BC"),
    ("//cdn.example.com/x", "https://cdn.example.com/x"),
    ("doi:10.1000/ABC", "doi:10.1000/ABC"),
])
def test_normalise_url(given: str, expected: str) -> None:
    assert normalise_url(given) == expected


@pytest.mark.parametrize(("given", "expected"), [
    # IPv6 hosts keep their brackets (without them the URL is invalid), with or without a port
    ("https://[::1]:8080/a", "https://[::1]:8080/a"),
    ("http://[2001:DB8::1]/x/", "https://[2001:db8::1]/x"),
    ("https://[2001:db8::1]:443/", "https://[2001:db8::1]/"),
    # a fully qualified host's trailing dot is the same host
    ("https://example.com./a", "https://example.com/a"),
    ("http://WWW.Example.com.:8080/a/", "https://example.com:8080/a"),
    ("example.com./a", "https://example.com/a"),
])
def test_normalise_url_ipv6_and_trailing_dot(given: str, expected: str) -> None:
    assert normalise_url(given) == expected
    assert normalise_url(expected) == expected  # idempotent


def test_url_policy_keeps_what_it_is_told() -> None:
    assert normalise_url("http://www.a.com/x/", UrlPolicy(keep_www=True, keep_scheme=True)) == "http://www.a.com/x"
    assert normalise_url("https://a.com/x/", UrlPolicy(strip_trailing_slash=False)) == "https://a.com/x/"
    assert normalise_url("https://a.com/?utm_x=1", UrlPolicy(drop_tracking=False)) == "https://a.com/?utm_x=1"


def test_normalise_text() -> None:
    assert normalise_text("  The <b>Quick</b>&nbsp;Brown\nFOX… ") == "the quick brown fox"
    assert normalise_text("...ﬁne print...") == "fine print"  # NFKC folds the ligature


def test_simhash_near_and_far() -> None:
    base = "the quick brown fox jumps over the lazy dog near the river bank on a sunny afternoon in june"
    near = base.replace("sunny", "warm")
    far = "completely unrelated text about stock markets interest rates and the federal reserve bank policy"
    a, b, c = simhash(base), simhash(near), simhash(far)
    assert a is not None and b is not None and c is not None
    assert hamming(a, b) < hamming(a, c)
    assert simhash("too short to fingerprint") is None
    # pigeonhole: within 3 bits, at least one of the 4 bands is equal
    flipped = a ^ 0b1011
    assert any(x == y for x, y in zip(simhash_bands(a, 3), simhash_bands(flipped, 3), strict=True))


def one_search(*results: Result) -> list[Iteration]:
    return [Iteration((Search(results),))]


def test_domain_and_generic_ids_are_separate_key_spaces() -> None:
    d = deduplicate(one_search(Result(id="123"), Result(domain_id="123")))
    assert len(d.unique) == 2 and all(x.new for x in d.decisions)
    assert d.decisions[1].checks == ()  # not even a candidate


def test_hard_mismatch_rejects_even_with_agreements() -> None:
    # same id but different URLs: rejected (the id agreement cannot outweigh a hard mismatch)
    d = deduplicate(one_search(Result(id="x", url="https://a.com/1"), Result(id="x", url="https://a.com/2")))
    assert len(d.unique) == 2
    check = d.decisions[1].checks[0]
    assert check.hard and not check.accepted and ("id", 1.0) in check.agreements
    # the snippet is soft: the same URL with another query's snippet merges
    d = deduplicate(one_search(Result(url="https://a.com/1", snippet="about cats"),
                               Result(url="https://a.com/1/", snippet="about dogs")))
    assert len(d.unique) == 1


def test_confidence_threshold() -> None:
    title_snippet = one_search(Result(title="T", snippet="S"), Result(title="t", snippet="s"))
    assert len(deduplicate(title_snippet).unique) == 1  # 0.5 + 0.5 >= 1.0
    assert len(deduplicate(title_snippet, DedupSettings(threshold=1.5)).unique) == 2
    assert len(deduplicate(one_search(Result(title="T"), Result(title="T"))).unique) == 2  # 0.5 < 1.0
    with pytest.raises(PolicyError, match="threshold"):
        DedupSettings(threshold=0)
    with pytest.raises(PolicyError, match="unknown hard field"):
        DedupSettings(hard_fields=("doi",))


def test_soft_fields_by_settings() -> None:
    pair = one_search(Result(url="https://a.com/x", title="Home - A"), Result(url="https://a.com/x", title="Home"))
    assert len(deduplicate(pair).unique) == 2  # the title is hard by default (the seed: any mismatch rejects)
    soft = DedupSettings(hard_fields=("domain_id", "id", "url", "content"))
    assert len(deduplicate(pair, soft).unique) == 1


def test_learned_fields_find_later_duplicates() -> None:
    # #1 learns its URL from its second occurrence (matched by id); a third result with only the URL joins #1
    its = [Iteration((Search((Result(id="k"),)),)), Iteration((Search((Result(id="k", url="https://z.org/a"),)),)),
           Iteration((Search((Result(url="z.org/a/"),)),))]
    d = deduplicate(its)
    assert len(d.unique) == 1 and [x.new for x in d.decisions] == [True, False, False]


def test_best_candidate_wins() -> None:
    # the third result shares a title+snippet with #1 (confidence 1.0) and the id with #2 (1.0) plus the
    # title (0.5) -> #2
    d = deduplicate(one_search(Result(title="T", snippet="S"), Result(id="k", title="T"),
                               Result(id="k", title="T", snippet="S")))
    assert d.decisions[2].unique == 2 and len(d.decisions[2].checks) == 2


NEWS = ("The city council approved the new budget for public transport on Monday evening after a long debate. "
        "The plan adds three tram lines, extends night bus service to every district, and freezes ticket prices "
        "until 2027. Opposition members argued that the cost estimates were optimistic and asked for an independent "
        "review of the financing, which relies on a regional grant and a new parking levy in the city centre. The "
        "mayor said that construction of the first line would begin next spring and that residents would be "
        "consulted on the routes.")


def test_near_duplicates_off_by_default() -> None:
    syndicated = NEWS.replace("2027", "2028")  # the same story, one detail edited
    a, b = simhash(NEWS), simhash(syndicated)
    assert a is not None and b is not None and hamming(a, b) == 5
    pair = one_search(Result(id="a", content=NEWS), Result(content=syndicated, title="Budget approved"))
    assert len(deduplicate(pair).unique) == 2  # off: the contents differ, a hard mismatch
    assert len(deduplicate(pair, DedupSettings(near_duplicates=True)).unique) == 2  # 5 bits > 3
    d = deduplicate(pair, DedupSettings(near_duplicates=True, simhash_distance=6))
    assert len(d.unique) == 1
    check = d.decisions[1].checks[0]
    assert check.via == ("simhash",) and check.agreements == (("near-duplicate text", 1.0),)
    assert check.mismatches == (("content", syndicated, NEWS, False),)  # differs, but not a hard mismatch
    unrelated = one_search(Result(content=NEWS), Result(content=NEWS.replace("tram", "metro").upper()[::-1]))
    assert len(deduplicate(unrelated, DedupSettings(near_duplicates=True, simhash_distance=6)).unique) == 2


def test_explain_names_every_reason() -> None:
    its = [Iteration((Search((Result(id="d1", url="https://www.x.com/a/"),
                              Result(title="Same", url="https://b.com/1", content="alpha"))),
                      Search((Result(id="d1"),)))),
           Iteration((Search((Result(url="http://x.com/a?utm_source=q"),
                              Result(title="Same", url="https://c.com/2", content="beta"))),))]
    lines = explain(deduplicate(its))
    assert lines[0].startswith("i1.s1.r1") and lines[0].endswith("new #1")
    assert lines[2].startswith("i1.s2.r1") and lines[2].endswith(
        "duplicate of #1 (first at i1.s1.r1): via id; id +1; confidence 1 >= 1")
    assert lines[3].endswith("duplicate of #1 (first at i1.s1.r1): via url; url +1; confidence 1 >= 1")
    assert lines[4].endswith(
        "new #3; not #2 (via title; title +0.5; url differs [hard] ('https://c.com/2' vs 'https://b.com/1'); "
        "content differs [hard] ('beta' vs 'alpha'); rejected: hard mismatch)")
    below = explain(deduplicate(one_search(Result(title="T"), Result(title="T"))))
    assert below[1].endswith("new #2; not #1 (via title; title +0.5; rejected: confidence 0.5 < 1)")
