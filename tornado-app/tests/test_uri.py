import pytest

from crossbench_contract.paths import InvalidPath, normalize, reencode


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("/static/index.html", "/static/index.html"),
        ("/static//index.html", "/static/index.html"),
        ("/static/./index.html", "/static/index.html"),
        ("/static/sub/../index.html", "/static/index.html"),
        ("/static/%69ndex.html", "/static/index.html"),
        ("/static/index.html;jsessionid=1", "/static/index.html"),
        ("/static/", "/static/"),
        ("/static/%252e%252e/x", "/static/%2e%2e/x"),
        ("/static/../WEB-INF/web.xml", "/WEB-INF/web.xml"),
    ],
)
def test_normalize_like_tomcat(raw, expected):
    assert normalize(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "/../etc/passwd",
        "/static/../../etc/passwd",
        "/static/%2e%2e/%2E%2E/x",
        "/a%2fb",
        "/a%5cb",
        "/a%00",
        "/%zz",
        "/a\\b",
        "/static/..;/..;/x",
        "/%ff",
    ],
)
def test_normalize_rejects_what_tomcat_rejects(raw):
    with pytest.raises(InvalidPath):
        normalize(raw)


def test_reencode_survives_one_more_decoding():
    from urllib.parse import unquote

    assert unquote(reencode("/static/%2e%2e/x")) == "/static/%2e%2e/x"
