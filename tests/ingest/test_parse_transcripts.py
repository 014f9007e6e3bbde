"""WebVTT and SRT: one segment per cue, times in seconds, tags stripped."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant_bridge.errors import DocumentParseError
from assistant_bridge.ingest import parse_file
from assistant_bridge.ingest.transcripts import parse_timestamp

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_vtt_cues_times_speakers_and_title() -> None:
    doc = parse_file("meeting.vtt", (FIXTURES / "meeting.vtt").read_bytes())
    assert doc.title == "Quarterly IT update"
    assert doc.mime_type == "text/vtt"
    assert doc.modality == "video_transcript"
    cues = [doc.text[s.start_char : s.end_char] for s in doc.segments]
    assert cues == [
        "Alice: Welcome to the quarterly IT update.",
        "Bob: The new VPN gateways go live on Monday. Please update your client & restart.",
        "Questions go to the help desk.",
    ]
    assert doc.text == "\n".join(cues)
    assert [(s.start_time, s.end_time) for s in doc.segments] == [(1.0, 4.5), (4.5, 9.25), (3600.0, 3602.0)]
    assert all(s.page_number is None and s.bboxes == () for s in doc.segments)
    assert "ignored" not in doc.text and "yellow" not in doc.text


def test_srt_cues_with_crlf_tags_and_empty_cue() -> None:
    doc = parse_file("webinar.srt", (FIXTURES / "webinar.srt").read_bytes(), modality="audio_transcript")
    assert doc.title == "webinar"
    assert doc.mime_type == "application/x-subrip"
    assert doc.modality == "audio_transcript"
    assert doc.language == "fr"
    cues = [doc.text[s.start_char : s.end_char] for s in doc.segments]
    assert cues == [
        "Bonjour à tous et bienvenue.",
        "Les notes de frais se déclarent dans le portail.",
        "Merci !",
    ]
    assert [(s.start_time, s.end_time) for s in doc.segments] == [(0.5, 3.0), (3.0, 7.75), (10.0, 12.5)]


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("00:00:01.000", 1.0), ("01:02:03.5", 3723.5), ("02:03,250", 123.25), ("10:00", 600.0)],
)
def test_parse_timestamp(value: str, seconds: float) -> None:
    assert parse_timestamp(value) == seconds


def test_transcript_errors() -> None:
    with pytest.raises(DocumentParseError, match="WEBVTT"):
        parse_file("x.vtt", b"00:00:01.000 --> 00:00:02.000\nhello")
    with pytest.raises(DocumentParseError, match="no cue"):
        parse_file("x.vtt", b"WEBVTT\n\nNOTE nothing here\n")
    with pytest.raises(DocumentParseError, match="malformed"):
        parse_file("x.srt", b"1\n00:00:01 --> soon\nhello\n")
