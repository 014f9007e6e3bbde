"""detect_language: ja / fr / en heuristic."""

from __future__ import annotations

import pytest

from assistant_bridge.core.language import detect_language

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("経費は三十日以内に申請してください。", "ja"),
        ("パスワードを忘れた場合", "ja"),
        ("VPN接続の設定方法について説明します。Windows と macOS に対応しています。", "ja"),
        ("Les notes de frais doivent être soumises dans le portail avec les justificatifs.", "fr"),
        ("Déposez votre demande de congés avant le 31 mars.", "fr"),
        ("Qu'est-ce qu'un incident de sécurité ?", "fr"),
        ("Employees may work remotely up to three days per week.", "en"),
        ("The café on the ground floor is open to all employees.", "en"),
        ("", "en"),
        ("12345 !!! ---", "en"),
    ],
)
def test_detect_language(text: str, expected: str) -> None:
    assert detect_language(text) == expected


def test_a_few_english_words_in_japanese_text_stay_japanese() -> None:
    assert detect_language("VPN client の password を reset してください。ヘルプデスクに連絡します。") == "ja"
