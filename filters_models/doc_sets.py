"""Labelled (question, passage window) pairs from manual pages, for the cross-encoder of the pre-filter.

The public sets the cross-encoder learns from (SQuAD 2.0, PIAF, JSQuAD, HotpotQA, CLAPNQ) are encyclopaedia
paragraphs and questions about facts. A manual page answers another kind of question with another kind of text:
"The server uses port 2222, how do I tell it? — scp" is answered by ``-P port: Specifies the port to connect to on
the remote host.``, which names neither the value nor the words of the question. Trained on facts, the model
reads a value the passage does not write as a sign that the passage does not answer, and scored that entry 0.13.

These pairs teach the other kind. The pages are those of :data:`PACKAGES`, Debian packages no benchmark of the
project and none of its held-out checks reads (the benchmarks' pages, coreutils, passwd and dpkg are left out).
Each page is parsed and chunked as the service ingests it; each sampled option entry
(:func:`assistant_bridge.text.option_entries`) gives a question written from its description by a template
("How do I {do what it does} with {command}?", "Which {command} option {does it}?", a short follow-up "{Do it}? —
{command}" as the embedded rewriter writes one, sometimes with a value the user has in mind: "The server listens
on port 8022. How do I …"), and

* ``entry``       (label 1) the window of the entry's chunk that holds the entry's first sentence;
* ``same_page``   (label 0) the window of another chunk of the page that shares the most words with the question;
* ``other_page``  (label 0) the question asked of another page's command, with that page's window sharing the
  most words with it (an option the page does not have: "Which bzip2 option encrypts …?"); only when the other
  page never writes the entry's option.

Pages are split train / held out by name (:func:`datasets.split_of`); every choice is seeded by the page and the
entry, so a rerun builds the same pairs. ``collect`` fetches the packages with ``apt-get download`` (nothing is
installed) and renders their pages of sections 1 and 8 with ``man``.

Used by ``train_cross.py --man-pages DIR`` only; measured and not used for the shipped model: the cross-encoder
learned the templates' wording, and the real follow-ups it was meant for scored lower (``MODEL_CARD_pre.md``).
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

from cross_sets import Pair, _best
from datasets import rng_for, split_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from assistant_bridge.core.chunking import chunk_document  # noqa: E402
from assistant_bridge.errors import BridgeError  # noqa: E402
from assistant_bridge.filters.cross import WordPiece, windows  # noqa: E402
from assistant_bridge.ingest.parsers import parse_file  # noqa: E402
from assistant_bridge.settings import IngestSettings  # noqa: E402
from assistant_bridge.text import option_entries, sentence_spans  # noqa: E402
from bench._common import render_man, unpack_deb  # noqa: E402

PACKAGES = (
    "util-linux",
    "procps",
    "iproute2",
    "psmisc",
    "bsdextrautils",
    "e2fsprogs",
    "openssl",
    "net-tools",
    "man-db",
    "lz4",
    "gettext",
    "cmake",
)
ENTRIES_PER_PAGE = 10
SAME_PAGE_SHARE = 0.7
OTHER_PAGE_SHARE = 0.3
VALUE_SHARE = 0.25

# verbs a description opens with ("Specifies the port…", "Print the commands…"): the question asks to do that
_VERBS = frozenset(
    """accept add allow append apply ask assume attach attempt bind block break build call cancel cause change check
    choose clean clear close combine compare compress configure connect continue control convert copy count create
    decode decompress decrease define delete detach disable discard display do dump echo edit emit enable encode
    encrypt end enter erase exclude execute exit expand export filter find fix flush follow force format generate get
    give group hide hold ignore import include increase indicate inherit initialize insert install interpret keep
    kill label limit link list listen load lock log look make map mark match merge modify monitor mount move name
    omit open output override pass pause perform pick place poll prefer prepend preserve prevent print process
    produce prompt protect put query quit read receive recurse redirect refresh reject release reload remove rename
    repeat replace report request require reset resize resolve restart restore resume retry return reverse rotate
    run save scan search select send separate set show shrink shut skip sleep sort specify split start stop store
    strip suppress swap switch sync take tell terminate test toggle trace track transfer treat trigger truncate try
    turn unlock unmount unset update use verify wait watch write""".split()
)
_PLACEHOLDER_VALUES = {
    "port": ("The server listens on port {v}.", ("8022", "2222", "8443")),
    "size": ("I want a size of {v}.", ("500 MB", "2 GiB", "64k")),
    "seconds": ("I want it to wait {v} seconds.", ("30", "5", "120")),
    "timeout": ("I need a timeout of {v} seconds.", ("10", "60")),
    "user": ("I am logged in as {v}.", ("alice", "deploy")),
    "file": ("My file is {v}.", ("report.txt", "/var/log/app.log")),
    "host": ("The machine is {v}.", ("db1.example.com", "10.0.0.7")),
    "interface": ("My network interface is {v}.", ("eth0", "wlan0")),
    "device": ("My disk is {v}.", ("/dev/sdb", "/dev/nvme0n1")),
}
_TRIVIAL = re.compile(r"\b(?:help|version)\b", re.IGNORECASE)  # every page has them: nothing to learn
# a page of a command's subcommand: "openssl-genpkey" is asked as "openssl genpkey"
_SUBCOMMAND_PAGES = ("openssl-", "ip-", "tc-", "tipc-", "bridge-", "devlink-", "rdma-", "dcb-", "vdpa-")
_STOP = frozenset("a an the of to in on for with by from and or its it is are be this that".split())


def collect(out: Path, cache: Path) -> list[Path]:
    """The rendered pages (sections 1 and 8) of :data:`PACKAGES` in ``out``, fetched into ``cache`` once."""
    out.mkdir(parents=True, exist_ok=True)
    debs, root = cache / "debs", cache / "root"
    debs.mkdir(parents=True, exist_ok=True)
    for package in PACKAGES:
        if not unpack_deb(package, debs, root):
            raise SystemExit(f"apt-get download {package} failed (run 'apt-get update' once, as root)")
    pages = []
    for src in sorted(p for sec in ("man1", "man8") for p in (root / "usr/share/man" / sec).glob("*.gz")):
        dest = out / f"man-{src.name.removesuffix('.gz').rsplit('.', 1)[0]}.txt"
        if not dest.exists():
            text = render_man(str(src))
            if not text.strip():
                continue
            dest.write_text(text, encoding="utf-8")
        pages.append(dest)
    return pages


def _base(word: str) -> str:
    """A description's opening verb as the question asks it: "Specifies" → "specify", "Print" → "print"."""
    w = word.lower()
    if w in _VERBS:
        return w
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("shes", "sh"), ("ches", "ch"), ("xes", "x"), ("s", "")):
        if w.endswith(suffix) and w[: -len(suffix)] + repl in _VERBS:
            return w[: -len(suffix)] + repl
    return ""


def _third(verb: str) -> str:
    if verb in ("do", "go"):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    if verb.endswith(("s", "sh", "ch", "x")):
        return verb + "es"
    return verb + "s"


def _described(entry: str) -> tuple[str, str, list[str]] | None:
    """(term, verb, the words after it) of an entry whose description opens with a verb; ``None`` otherwise."""
    term, sep, desc = entry.partition(": ")
    if not sep or not desc or _TRIVIAL.search(desc[:80]):
        return None
    spans = sentence_spans(desc)
    first = desc[: spans[0][1]] if spans else desc
    first = re.split(r"[;(]| - |, (?:which|so|and|but|unless|if)\b", first)[0].strip().rstrip(".:,")
    words = first.split()
    if len(words) < 2 or len(words) > 24 or words[1].lower() == "not" or words[0].lower() == "don't":
        return None  # "Do not trim…": asked otherwise ("How do I keep it from trimming…?")
    verb = _base(words[0])
    if not verb:
        return None
    return term, verb, [w.strip(",") for w in words[1:]]


def _short(words: list[str], r: random.Random) -> list[str]:
    """The description's first two to five words, ending on one that carries meaning, as a user's short question
    keeps them ("specify the number of blocks" of "specify the number of blocks per group")."""
    kept = words[: r.randint(2, 5)]
    while len(kept) > 1 and kept[-1].lower() in _STOP:
        kept.pop()
    return kept


# the questions an entry answers: how to do what it does, which option does it, a short follow-up as the embedded
# rewriter writes one ("{Verb} {short}? — {command}")
_TEMPLATES = (
    "How do I {verb} {rest} with {command}?",
    "Which {command} option {third} {rest}?",
    "How can I make {command} {verb} {short}?",
    "Can {command} {verb} {rest}?",
    "{Verb} {short}? — {command}",
    "And {verb} {short}? — {command}",
    "How do I {verb} {short}?",
)


def question(command: str, term: str, verb: str, words: list[str], r: random.Random) -> str:
    """A question the entry answers, by one of :data:`_TEMPLATES`, sometimes after a value the user has in mind."""
    short = " ".join(_short(words, r))
    q = r.choice(_TEMPLATES).format(
        verb=verb, Verb=verb.capitalize(), third=_third(verb), rest=" ".join(words), short=short, command=command
    )
    argument = term.split()[-1].strip("<>[]=").lower() if " " in term or "=" in term else ""
    for key, (context, values) in _PLACEHOLDER_VALUES.items():
        if key in argument and r.random() < VALUE_SHARE:
            q = context.format(v=r.choice(values)) + " " + q
            break
    return q


def _command(page: Path) -> str:
    name = page.stem.removeprefix("man-")
    return name.replace("-", " ", 1) if name.startswith(_SUBCOMMAND_PAGES) else name


def pairs(pages: list[Path], tok: WordPiece) -> list[Pair]:
    """The labelled pairs of ``pages`` (rendered manual pages), as the module docstring describes."""
    ingest = IngestSettings()
    docs: dict[str, tuple[str, list[tuple[int, int, list[str]]]]] = {}
    for page in pages:
        try:
            parsed = parse_file(page.name, page.read_bytes())
        except BridgeError:  # a page with no text (NoContent), or one that does not parse: nothing to learn from
            continue
        chunks = chunk_document(parsed, max_tokens=ingest.chunk_tokens, overlap_tokens=ingest.overlap_tokens)
        spans = [(c.start_char, c.end_char, [w for w, _ in windows(c.text, tok)]) for c in chunks]
        docs[_command(page)] = (parsed.text, spans)
    names = sorted(docs)
    splits = {name: split_of(name) for name in names}
    out: list[Pair] = []
    for name in names:
        text, chunks = docs[name]
        split = splits[name]
        entries = option_entries(text)
        r = rng_for("docs", name)
        for start, end in sorted(r.sample(entries, min(ENTRIES_PER_PAGE, len(entries)))):
            described = _described(text[start:end])
            if described is None:
                continue
            term, verb, words = described
            er = rng_for("docs", name, str(start))
            q = question(name, term, verb, words, er)
            head = text[start : min(end, start + 60)]  # the entry's opening, as a window writes it
            holding = [c for c in chunks if c[0] <= start < c[1]]
            pos = next((w for c in holding for w in c[2] if head in w), None)
            if pos is None:
                continue
            out.append(Pair(q, pos, 1, "manpages", "en", "entry", split))
            others = [w for c in chunks if not c[0] <= start < c[1] for w in c[2] if head not in w]
            if others and er.random() < SAME_PAGE_SHARE:
                out.append(Pair(q, _best(q, others) or others[0], 0, "manpages", "en", "same_page", split))
            option = term.split(",")[0].split()[0]
            foreign = [n for n in names if n != name and splits[n] == split and option not in docs[n][0]]
            if foreign and er.random() < OTHER_PAGE_SHARE:
                other = er.choice(foreign)
                asked = re.sub(rf"\b{re.escape(name)}\b", other, q)
                wins = [w for c in docs[other][1] for w in c[2]]
                if asked != q and wins:
                    out.append(Pair(asked, _best(asked, wins) or wins[0], 0, "manpages", "en", "other_page", split))
    return out
