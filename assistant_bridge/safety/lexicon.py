"""Word lists of the HAP (hate, abuse, profanity) filter, in English, French and Japanese.

Deliberately modest: the common terms of each category, not an exhaustive list. Each entry has a
severity weight in [0, 1] (about the score one occurrence gives on its own) and a category:

* ``profanity``: swearing that is not aimed at anyone;
* ``abuse``: insults, harassment, threats, incitement to self-harm;
* ``hate``: slurs and dehumanising statements about a group.

Ambiguous words have low weights so they count only together with others (``dick`` is also a name,
``chink`` also "a chink in the armour", ``cock`` also a rooster). Latin-script entries are matched on whole
words after normalisation (see :mod:`.hap`); a trailing ``*`` also matches longer words with that start
(``fuck*`` matches ``fucking``). Multi-word entries match word sequences. Japanese entries are matched as
substrings (katakana and hiragana are folded together); ``!K`` at the end means "not inside a longer katakana
word": not followed nor preceded by another katakana character, which keeps ``カス`` out of ``カスタマー`` and
``フォーカス``.

``GROUPS`` and ``DEHUMANISING`` drive the one rule that is not a word list: a group name within a few words
of a dehumanising term or a call to exterminate ("immigrants are vermin") scores as hate. The terms are
kept to those with no ordinary use next to a group name, so a history text ("... were killed in ...") does
not trigger it.
"""

from __future__ import annotations

Entry = tuple[str, float, str]

LATIN: tuple[Entry, ...] = (
    # English: profanity
    ("fuck*", 0.6, "profanity"),
    ("motherfuck*", 0.8, "profanity"),
    ("shit", 0.55, "profanity"),
    ("shits", 0.55, "profanity"),
    ("shitty", 0.5, "profanity"),
    ("bullshit", 0.55, "profanity"),
    ("crap", 0.25, "profanity"),
    ("crappy", 0.25, "profanity"),
    ("damn", 0.15, "profanity"),
    ("goddamn*", 0.3, "profanity"),
    ("piss", 0.3, "profanity"),
    ("pissed", 0.25, "profanity"),
    ("bollocks", 0.4, "profanity"),
    ("wtf", 0.35, "profanity"),
    ("stfu", 0.6, "abuse"),
    ("dick", 0.3, "profanity"),
    ("cock", 0.3, "profanity"),
    ("ass", 0.25, "profanity"),
    ("arse", 0.3, "profanity"),
    # English: abuse
    ("fuck you", 0.85, "abuse"),
    ("fuck off", 0.75, "abuse"),
    ("screw you", 0.5, "abuse"),
    ("asshole*", 0.7, "abuse"),
    ("arsehole*", 0.7, "abuse"),
    ("bastard*", 0.55, "abuse"),
    ("bitch*", 0.65, "abuse"),
    ("cunt*", 0.9, "abuse"),
    ("twat*", 0.7, "abuse"),
    ("wanker*", 0.7, "abuse"),
    ("dickhead*", 0.7, "abuse"),
    ("dumbass", 0.6, "abuse"),
    ("jackass", 0.5, "abuse"),
    ("slut*", 0.75, "abuse"),
    ("whore*", 0.75, "abuse"),
    ("idiot", 0.3, "abuse"),
    ("idiots", 0.3, "abuse"),
    ("moron*", 0.4, "abuse"),
    ("stupid", 0.25, "abuse"),
    ("loser", 0.25, "abuse"),
    ("scumbag*", 0.6, "abuse"),
    ("shut up", 0.3, "abuse"),
    ("retard", 0.7, "abuse"),
    ("retards", 0.7, "abuse"),
    ("retarded", 0.6, "abuse"),
    ("kill yourself", 0.95, "abuse"),
    ("kys", 0.7, "abuse"),
    ("go die", 0.8, "abuse"),
    ("die in a fire", 0.9, "abuse"),
    ("i will kill you", 0.95, "abuse"),
    ("i'll kill you", 0.95, "abuse"),
    # English: hate (slurs)
    ("nigger*", 1.0, "hate"),
    ("nigga*", 0.8, "hate"),
    ("faggot*", 1.0, "hate"),
    ("fag", 0.5, "hate"),
    ("fags", 0.6, "hate"),
    ("kike*", 1.0, "hate"),
    ("spic", 0.8, "hate"),
    ("spics", 0.8, "hate"),
    ("wetback*", 0.9, "hate"),
    ("chink", 0.45, "hate"),
    ("chinks", 0.6, "hate"),
    ("gook*", 0.85, "hate"),
    ("raghead*", 0.9, "hate"),
    ("towelhead*", 0.9, "hate"),
    ("tranny", 0.75, "hate"),
    ("trannies", 0.75, "hate"),
    ("subhuman*", 0.7, "hate"),
    # French: profanity
    ("putain", 0.5, "profanity"),
    ("merde", 0.4, "profanity"),
    ("bordel", 0.2, "profanity"),
    ("chier", 0.4, "profanity"),
    ("fais chier", 0.5, "profanity"),
    ("foutre", 0.4, "profanity"),
    ("nique", 0.6, "profanity"),
    ("niquer", 0.6, "profanity"),
    # French: abuse
    ("connard*", 0.7, "abuse"),
    ("connasse*", 0.7, "abuse"),
    ("con", 0.3, "abuse"),
    ("salaud*", 0.65, "abuse"),
    ("salope*", 0.75, "abuse"),
    ("encule*", 0.8, "abuse"),
    ("pute", 0.7, "abuse"),
    ("putes", 0.7, "abuse"),
    ("fils de pute", 0.9, "abuse"),
    ("batard*", 0.55, "abuse"),
    ("debile*", 0.3, "abuse"),
    ("abruti*", 0.4, "abuse"),
    ("cretin*", 0.35, "abuse"),
    ("imbecile*", 0.35, "abuse"),
    ("ta gueule", 0.5, "abuse"),
    ("ferme ta gueule", 0.65, "abuse"),
    ("va te faire foutre", 0.85, "abuse"),
    ("nique ta mere", 0.9, "abuse"),
    ("je vais te tuer", 0.95, "abuse"),
    ("suicide-toi", 0.95, "abuse"),
    ("tue-toi", 0.9, "abuse"),
    # French: hate (slurs)
    ("bougnoule*", 1.0, "hate"),
    ("youpin*", 1.0, "hate"),
    ("pede", 0.75, "hate"),
    ("pedes", 0.75, "hate"),
    ("negro", 0.8, "hate"),
    ("negros", 0.8, "hate"),
    ("bicot*", 0.9, "hate"),
    ("tarlouze*", 0.8, "hate"),
    ("sous-homme*", 0.7, "hate"),
)

JAPANESE: tuple[Entry, ...] = (
    # profanity
    ("クソ!K", 0.45, "profanity"),
    ("糞", 0.4, "profanity"),
    ("チクショウ", 0.35, "profanity"),
    ("畜生", 0.3, "profanity"),
    # abuse
    ("死ね", 0.85, "abuse"),
    ("氏ね", 0.8, "abuse"),
    ("殺すぞ", 0.9, "abuse"),
    ("ぶっ殺", 0.9, "abuse"),
    ("殺してやる", 0.9, "abuse"),
    ("くたばれ", 0.8, "abuse"),
    ("消えろ", 0.55, "abuse"),
    ("失せろ", 0.6, "abuse"),
    ("バカ!K", 0.35, "abuse"),
    ("馬鹿", 0.35, "abuse"),
    ("アホ!K", 0.35, "abuse"),
    ("ボケ!K", 0.3, "abuse"),
    ("カス!K", 0.5, "abuse"),
    ("クズ!K", 0.55, "abuse"),
    ("ゴミ野郎", 0.7, "abuse"),
    ("キモい", 0.4, "abuse"),
    ("キモイ", 0.4, "abuse"),
    ("ウザい", 0.35, "abuse"),
    ("ウザイ", 0.35, "abuse"),
    ("ブス!K", 0.5, "abuse"),
    ("デブ!K", 0.4, "abuse"),
    ("ジジイ", 0.4, "abuse"),
    ("ババア", 0.45, "abuse"),
    # hate (slurs)
    ("ガイジ", 0.9, "hate"),
    ("キチガイ", 0.8, "hate"),
    ("気違い", 0.75, "hate"),
    ("基地外", 0.75, "hate"),
    ("池沼", 0.75, "hate"),
    ("チョン!K", 0.7, "hate"),
    ("土人", 0.65, "hate"),
    ("支那", 0.45, "hate"),
)

# ordinary words that contain an entry; removed before matching
BENIGN_JA = (
    "ばかばかしい",
    "バカバカしい",
    "馬鹿馬鹿しい",
    "馬鹿にならない",
    "ばかにならない",
    "クソ真面目",
    "支那そば",
    "死ねない",
    "死ねば",
    "ばかり",  # "only", "just": "0 ばかりからなるブロック", "…なものばかりです"
    "なくそ",  # "…なくその値", "無くそう": くそ across two words
)
SECOND_PERSON = frozenset({"you", "you're", "youre", "your", "u", "ur", "ya", "tu", "toi", "t'es", "espece"})
SECOND_PERSON_JA = ("お前", "おまえ", "オマエ", "てめえ", "てめー", "テメエ", "貴様", "あんた")

GROUPS = frozenset(
    """jews jew muslims muslim christians blacks whites asians arabs arab mexicans immigrants migrants
refugees gays gay lesbians homosexuals transgender trans women gypsies roma foreigners
juifs juif musulmans musulman arabes noirs immigres migrants refugies homosexuels femmes roms etrangers""".split()
)
DEHUMANISING = frozenset(
    """vermin subhuman subhumans parasites cockroaches rats apes exterminate
vermine sous-hommes parasites cafards rats exterminer""".split()
)
GROUPS_JA = ("朝鮮人", "韓国人", "中国人", "在日", "外国人", "黒人", "ユダヤ人", "同性愛者", "ゲイ", "移民")
DEHUMANISING_JA = ("出ていけ", "出て行け", "死ね", "殺せ", "ゴキブリ", "害虫", "追い出せ", "駆除", "皆殺し")
