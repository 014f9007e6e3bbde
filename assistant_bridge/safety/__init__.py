"""Answer safety: the HAP (hate, abuse, profanity) filter applied to questions and answers
(:mod:`.hap`, word lists in :mod:`.lexicon`)."""

from assistant_bridge.safety.hap import (
    DEFAULT_THRESHOLD,
    FakeHapScorer,
    HapCheck,
    HapScore,
    HapScorer,
    HapSettings,
    HapStage,
    HapVerdict,
    WordListScorer,
    shared_scorer,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "FakeHapScorer",
    "HapCheck",
    "HapScore",
    "HapScorer",
    "HapSettings",
    "HapStage",
    "HapVerdict",
    "WordListScorer",
    "shared_scorer",
]
