// Web chat for the client-side search relay (POST /v1/relay/message_stream).
// Every piece of model or document text is written with textContent; nothing here builds HTML from strings.
"use strict";

(function () {
  const RELAY_URL = "/v1/relay/message_stream";
  const KEY_STORE = "assistant-bridge.api-key";
  const meta = (name) => (document.querySelector(`meta[name="${name}"]`) || {}).content || "";
  const apiKeyHeader = meta("ab-api-key-header") || "X-API-Key";

  const log = document.getElementById("log");
  const form = document.getElementById("ask");
  const question = document.getElementById("question");
  const send = document.getElementById("send");
  const emptyHint = document.getElementById("empty-hint");
  const keyInput = document.getElementById("api-key");
  const credentials = document.getElementById("credentials");
  const docView = document.getElementById("doc-view");

  let context = null; // the assistant's context, echoed on the next turn (stateless conversation)
  let busy = false;

  keyInput.value = sessionStorage.getItem(KEY_STORE) || "";
  keyInput.addEventListener("change", () => sessionStorage.setItem(KEY_STORE, keyInput.value.trim()));

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function authHeaders() {
    const key = (keyInput.value || "").trim();
    return key ? { [apiKeyHeader]: key } : {};
  }

  // Only http(s) URLs become links; anything else (javascript:, data:) is ignored.
  function safeUrl(value) {
    if (typeof value !== "string" || !value) return null;
    try {
      const url = new URL(value, window.location.href);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (e) {
      return null;
    }
  }

  function documentId(result) {
    const meta = result && result.result_metadata;
    const id = meta && meta.document_id;
    return typeof id === "string" && id ? id : null;
  }

  // A link to a result's source: its url, else this service's document content route.
  function sourceLink(result, label) {
    const url = safeUrl(result && result.url);
    const docId = documentId(result);
    if (url) {
      const a = el("a", "source", label);
      a.href = url;
      a.target = "_blank";
      a.rel = "noopener noreferrer";
      return a;
    }
    if (docId) {
      const a = el("a", "source internal", label);
      a.href = "/v1/documents/" + encodeURIComponent(docId) + "/content";
      a.dataset.documentId = docId;
      a.addEventListener("click", (event) => {
        event.preventDefault();
        openDocument(docId);
      });
      return a;
    }
    return el("span", "source", label);
  }

  async function openDocument(docId) {
    docView.hidden = false;
    document.getElementById("doc-title").textContent = "Loading…";
    document.getElementById("doc-text").textContent = "";
    try {
      const resp = await fetch("/v1/documents/" + encodeURIComponent(docId) + "/content",
        { headers: { Accept: "application/json", ...authHeaders() } });
      const body = await resp.json();
      if (!resp.ok) throw new Error((body.error && body.error.message) || resp.statusText);
      document.getElementById("doc-title").textContent = body.title || body.filename || docId;
      document.getElementById("doc-text").textContent = body.text || "";
    } catch (err) {
      document.getElementById("doc-title").textContent = "The document could not be opened";
      document.getElementById("doc-text").textContent = String(err.message || err);
    }
  }
  document.getElementById("doc-close").addEventListener("click", () => { docView.hidden = true; });

  function addUser(text) {
    const li = el("li", "msg user");
    li.appendChild(el("div", "bubble", text));
    log.appendChild(li);
  }

  // One assistant turn: a bubble with one block per generic item, then citations and search results.
  function Turn() {
    this.li = el("li", "msg assistant pending");
    this.badge = el("span", "badge");
    this.status = el("div", "status", "Thinking…");
    this.items = el("div", "items");
    this.extra = el("div", "extra");
    const bubble = el("div", "bubble");
    bubble.append(this.badge, this.status, this.items, this.extra);
    this.li.appendChild(bubble);
    log.appendChild(this.li);
    this.blocks = new Map();
    this.relayResults = [];
    this.answerItem = null;
  }

  Turn.prototype.block = function (id, type) {
    let block = this.blocks.get(id);
    if (!block) {
      block = el("p", "item");
      this.blocks.set(id, block);
      this.items.appendChild(block);
    }
    block.dataset.responseType = type || "text";
    return block;
  };

  Turn.prototype.partial = function (item) {
    this.status.textContent = "";
    const block = this.block(item.streaming_metadata && item.streaming_metadata.id, item.response_type);
    block.textContent += item.text || "";
    scrollDown();
  };

  Turn.prototype.complete = function (item) {
    this.status.textContent = "";
    const block = this.block(item.streaming_metadata && item.streaming_metadata.id, item.response_type);
    block.textContent = item.text || "";
    if (item.response_type === "conversational_search" || item.response_type === "conversation_search") {
      this.answerItem = item;
    } else if (item.response_type === "search") {
      this.answerItem = null;
      this.relayResults = (item.primary_results || []).concat(item.additional_results || []);
    }
    scrollDown();
  };

  Turn.prototype.searching = function (data) {
    const queries = (data.searches || []).map((s) => s.query).filter(Boolean);
    this.status.textContent = "Searched for: " + queries.join(" · ");
    this.relayResults = data.search_results || [];
  };

  Turn.prototype.citations = function (item) {
    const citations = item.citations || [];
    if (!citations.length) return;
    const results = item.search_results || [];
    const box = el("section", "citations");
    box.appendChild(el("h3", null, item.citations_title || "How do we know?"));
    const list = el("ol", "citation-list");
    citations.forEach((c) => {
      const li = el("li", "citation");
      const result = typeof c.search_result_index === "number" ? results[c.search_result_index] : null;
      li.appendChild(sourceLink(result, c.title || (result && result.title) || "Source"));
      if (c.text) li.appendChild(el("blockquote", null, c.text));
      list.appendChild(li);
    });
    box.appendChild(list);
    this.extra.appendChild(box);
  };

  Turn.prototype.results = function (results) {
    if (!results.length) return;
    const details = el("details", "results");
    details.appendChild(el("summary", null, "Search results (" + results.length + ")"));
    const list = el("ol", "result-list");
    results.forEach((r) => {
      const li = el("li", "result");
      li.appendChild(sourceLink(r, r.title || "Untitled"));
      const highlight = r.highlight && Array.isArray(r.highlight.body) && r.highlight.body.length
        ? r.highlight.body.join(" … ") : r.body;
      const text = String(highlight || "");
      li.appendChild(el("p", "snippet", text.length > 400 ? text.slice(0, 400) + "…" : text));
      list.appendChild(li);
    });
    details.appendChild(list);
    this.extra.appendChild(details);
  };

  Turn.prototype.end = function (summary) {
    const outcome = (summary && summary.outcome) || "text";
    this.li.classList.remove("pending");
    this.li.classList.add("outcome-" + outcome);
    this.li.dataset.outcome = outcome;
    this.status.textContent = "";
    const labels = { idk: "I don't know", no_results: "No results", error: "Search unavailable" };
    if (labels[outcome]) this.badge.textContent = labels[outcome];
    if (this.answerItem) {
      this.citations(this.answerItem);
      const own = this.answerItem.search_results || [];
      this.results(this.relayResults.length ? this.relayResults : own);
    } else {
      this.results(this.relayResults);
    }
    scrollDown();
  };

  Turn.prototype.fail = function (message) {
    this.li.classList.remove("pending");
    this.li.classList.add("outcome-failed");
    this.li.dataset.outcome = "failed";
    this.badge.textContent = "Error";
    this.status.textContent = message;
  };

  function scrollDown() {
    window.scrollTo(0, document.body.scrollHeight);
  }

  // Server-sent events over fetch (EventSource cannot POST): yields {event, data} objects.
  async function* readEvents(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
      buffer = buffer.replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = "message";
        const data = [];
        frame.split("\n").forEach((line) => {
          if (line.startsWith(":")) return;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let val = colon < 0 ? "" : line.slice(colon + 1);
          if (val.startsWith(" ")) val = val.slice(1);
          if (field === "event") event = val;
          else if (field === "data") data.push(val);
        });
        if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
      }
      if (done) return;
    }
  }

  async function ask(text) {
    busy = true;
    send.disabled = true;
    emptyHint.hidden = true;
    addUser(text);
    const turn = new Turn();
    scrollDown();
    const body = { text };
    if (context) body.context = context;
    let ended = false;
    try {
      const response = await fetch(RELAY_URL, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...authHeaders() },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        let message = response.status + " " + response.statusText;
        try {
          const err = await response.json();
          if (err.error && err.error.message) message = err.error.message;
        } catch (e) { /* not JSON */ }
        if (response.status === 401) {
          credentials.open = true;
          message = "This service needs credentials: enter an API key under Credentials.";
        }
        turn.fail(message);
        return;
      }
      for await (const { event, data } of readEvents(response)) {
        const payload = data[event];
        if (event === "partial_item") turn.partial(payload);
        else if (event === "complete_item") turn.complete(payload);
        else if (event === "relay_search") turn.searching(payload);
        else if (event === "final_response") context = payload.context || null;
        else if (event === "relay_end") { turn.end(payload); ended = true; }
        else if (event === "error") { turn.fail(payload.message || "The answer could not be completed."); ended = true; }
      }
      if (!ended) turn.fail("The answer stream ended early.");
    } catch (err) {
      turn.fail("The service could not be reached (" + (err.message || err) + ").");
    } finally {
      busy = false;
      send.disabled = false;
      question.focus();
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text || busy) return;
    question.value = "";
    ask(text);
  });

  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  document.getElementById("new-chat").addEventListener("click", () => {
    context = null;
    log.replaceChildren();
    emptyHint.hidden = false;
    docView.hidden = true;
    question.focus();
  });

  if (meta("ab-auth-required") === "true" && !keyInput.value) credentials.open = true;
  question.focus();
})();
