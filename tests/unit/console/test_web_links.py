"""A page links only absolute http(s) addresses made of URL characters; everything else stays text."""

from __future__ import annotations

from modelguard.console.web_links import web_link


def test_only_http_addresses_with_a_host_and_url_characters_are_links() -> None:
    for good in ("https://github.com/acme/churn/pull/7#issuecomment-1", "http://ghe.internal:8080/a/b/runs/3?x=1"):
        assert web_link(good) == good
    for bad in (
        None,
        "",
        42,
        "javascript:alert(1)",
        "data:text/html,x",
        "ftp://host/file",
        "//host/no-scheme",
        "/relative",
        "https://",
        "https://user:pw@github.com/x",
        'https://github.com/x"onclick=alert(1)',
        "https://github.com/<script>",
        "https://github.com/a b",
        "https://github.com/a\nb",
        "https://github.com/" + "a" * 2000,
    ):
        assert web_link(bad) is None, bad
