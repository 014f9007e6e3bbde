"""The web chat end to end in headless Chromium (Debian's ``/usr/bin/chromium``, driven over the DevTools
pipe): type a question, watch the answer stream in with its citations and search results, open a cited
document, get "I don't know" for an unanswerable question, and see that hostile document text stays text.

Set ``WEBCHAT_SCREENSHOT=docs/webchat.png`` to also write the documentation screenshot (with
``WEBCHAT_REAL_MODELS=1`` the app uses the real multilingual embedder and sentence encoder).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.apps import sample_app
from tests.e2e.cdp import CHROMIUM, Browser
from tests.relay.helpers import ServerThread

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is absent: apt-get install chromium"),
]
HOSTILE_TITLE = "Badge office <img src=x onerror=\"document.body.dataset.pwned='1'\">"
HOSTILE_TEXT = (
    "The badge office <script>document.body.dataset.pwned='2'</script> is open from 9 to 5. "
    "Lost badges are replaced at the badge office <b>same day</b>."
)
LAST = "document.querySelector('#log li.msg.assistant:last-child')"


@pytest.fixture(scope="module")
def site(tmp_path_factory: Any) -> Iterator[str]:
    real = os.environ.get("WEBCHAT_REAL_MODELS") == "1"
    app, _ = sample_app(
        tmp_path_factory.mktemp("webchat"), real_models=real, extra_docs=[(HOSTILE_TITLE, HOSTILE_TEXT)]
    )
    with ServerThread(app) as srv:
        yield srv.base


@pytest.fixture(scope="module")
def browser(site: str) -> Iterator[Browser]:
    with Browser(width=1100, height=1000) as b:
        b.goto(site + "/chat")
        yield b


def ask(b: Browser, text: str) -> dict[str, Any]:
    count = b.evaluate("document.querySelectorAll('#log li.msg.assistant').length")
    b.evaluate("document.getElementById('question').focus()")
    b.type_text(text)
    b.press_enter()
    b.wait_for(
        f"document.querySelectorAll('#log li.msg.assistant').length > {count} && {LAST}.dataset.outcome", timeout=60
    )
    state: dict[str, Any] = b.evaluate(f"""(() => {{
        const li = {LAST};
        return {{
          outcome: li.dataset.outcome, classes: li.className,
          text: Array.from(li.querySelectorAll('.item')).map(p => p.textContent).join('\\n'),
          badge: li.querySelector('.badge').textContent,
          citationsTitle: (li.querySelector('.citations h3') || {{}}).textContent || null,
          citations: Array.from(li.querySelectorAll('.citation a.source')).map(a =>
              ({{text: a.textContent, href: a.getAttribute('href')}})),
          resultsSummary: (li.querySelector('details.results summary') || {{}}).textContent || null,
          resultsOpen: (li.querySelector('details.results') || {{}}).open || false,
          resultTitles: Array.from(li.querySelectorAll('.result a.source, .result span.source')).map(a => a.textContent),
          user: li.previousElementSibling.textContent,
        }};
    }})()""")
    return state


def test_page_loads_without_errors(browser: Browser) -> None:
    assert browser.evaluate("document.title") == "Ask your documents"
    assert browser.evaluate("document.activeElement.id") == "question"
    assert browser.problems() == []


def test_an_answer_streams_in_with_citations_and_search_results(browser: Browser, site: str) -> None:
    browser.evaluate("""(() => { window.__updates = 0;
        new MutationObserver((records) => { window.__updates += records.filter(r =>
            r.target.classList && r.target.classList.contains('item')).length; })
          .observe(document.getElementById('log'), {childList: true, subtree: true, characterData: true}); })()""")
    state = ask(browser, "How do I reset my password?")
    assert browser.evaluate("window.__updates") > 3  # the text arrived in pieces, not at once
    assert state["outcome"] == "answer", state
    assert state["user"] == "How do I reset my password?"
    assert "password" in state["text"].lower() and state["badge"] == ""
    assert state["citationsTitle"] == "How do we know?"
    assert state["citations"] and all(
        c["href"].startswith("/v1/documents/") and c["href"].endswith("/content") for c in state["citations"]
    )
    assert any("Password" in c["text"] for c in state["citations"])
    assert state["resultsSummary"].startswith("Search results (") and not state["resultsOpen"]
    assert state["resultTitles"][0] == "Resetting Your Password and Multi-Factor Authentication"
    assert browser.problems() == []


def test_a_cited_document_opens_beside_the_chat(browser: Browser) -> None:
    browser.evaluate(f"{LAST}.querySelector('.citation a.source.internal').click()")
    title = browser.wait_for(
        "!document.getElementById('doc-view').hidden && "
        "document.getElementById('doc-title').textContent !== 'Loading…' && "
        "document.getElementById('doc-title').textContent"
    )
    assert title == "Resetting Your Password and Multi-Factor Authentication"
    assert "password" in browser.evaluate("document.getElementById('doc-text').textContent").lower()
    browser.evaluate("document.getElementById('doc-close').click()")
    assert browser.evaluate("document.getElementById('doc-view').hidden") is True


def test_i_dont_know_is_shown_as_such(browser: Browser) -> None:
    state = ask(browser, "What is the capital of Mongolia?")
    assert state["outcome"] == "idk" and "outcome-idk" in state["classes"]
    assert state["badge"] == "I don't know" and state["citations"] == []
    style = browser.evaluate(f"getComputedStyle({LAST}.querySelector('.bubble')).borderTopStyle")
    assert style == "dashed"  # styled apart from answers
    if os.environ.get("WEBCHAT_SCREENSHOT"):  # the answer above and this "I don't know", for the docs
        browser.evaluate("window.scrollTo(0, 0)")
        browser.screenshot(Path(os.environ["WEBCHAT_SCREENSHOT"]), full_page=True)


def test_document_text_is_never_markup(browser: Browser) -> None:
    state = ask(browser, "Where is the badge office and when is it open?")
    assert state["outcome"] == "answer", state
    assert "<script>" in state["text"] or "<b>" in state["text"] or "badge office" in state["text"]
    assert any("<img src=x" in t for t in state["resultTitles"] + [c["text"] for c in state["citations"]])
    assert browser.evaluate("document.querySelectorAll('#log img, #log script, #log b').length") == 0
    assert browser.evaluate("document.body.dataset.pwned || null") is None


def test_the_conversation_continues_with_the_echoed_context(browser: Browser) -> None:
    ask(browser, "How do I report a security incident?")
    sent = browser.evaluate(
        """(async () => {
        const r = await fetch('/v1/relay/message', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                   body: JSON.stringify({text: 'ping'})});
        return r.status; })()""",
        await_promise=True,
    )
    assert sent == 200
    browser.evaluate("document.getElementById('new-chat').click()")
    assert browser.evaluate("document.querySelectorAll('#log li').length") == 0
    assert browser.problems() == []


def test_security_headers_block_framing_and_remote_code(site: str) -> None:
    import httpx

    resp = httpx.get(site + "/chat")
    csp = resp.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "http" not in csp and "'unsafe-inline'" not in csp
    assert resp.headers["x-frame-options"] == "DENY"
    with Browser(width=800, height=600) as b:
        b.goto(site + "/healthz")  # a same-origin page without a CSP of its own frames the chat
        b.evaluate("""(() => { const f = document.createElement('iframe'); f.id = 'f';
                      f.onload = () => { document.body.dataset.framed = '1'; };
                      f.src = '/chat'; document.body.appendChild(f); })()""")
        b.wait_for("document.body.dataset.framed === '1'", timeout=20)
        # the frame was refused: its document is an error page, not the chat
        assert (
            b.evaluate(
                "(() => { try { const d = document.getElementById('f').contentDocument;"
                " return d ? (d.getElementById('question') ? 'chat' : 'blocked') : 'blocked'; }"
                " catch (e) { return 'blocked'; } })()"
            )
            == "blocked"
        )
        b.evaluate("document.getElementById('f').src = '/healthz'")  # control: a page without the headers frames
        b.wait_for(
            "(() => { try { return document.getElementById('f').contentDocument.body.textContent"
            ".includes('ok'); } catch (e) { return false; } })()",
            timeout=20,
        )
