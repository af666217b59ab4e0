"""What a client must never read in a JSON answer: the name of one of our Swift types, or a Swift decoder's own text
(which names them: "Cannot initialize Holder from invalid String value").

The names are derived from Sources/ each time (every type declared there whose name cannot be a plain word: two
capitals or more and six characters or more, `CatchSystem`, `WallTime`), never kept by hand. The Swift tests read
the list from this file (`python3 answer_words.py` prints it as JSON) and check every answer their request helpers
get; the Python tests import it:

    import answer_words
    answer_words.watch_http_client()    # every JSON body read through http.client (and urllib) is checked
    answer_words.check(body, content_type)   # or one body; raises AssertionError naming the word and the body
"""

import functools
import http.client
import json
import re
import sys
from pathlib import Path

SOURCES = Path(__file__).resolve().parents[2] / "Sources"
DECLARATION = re.compile(r"\b(?:struct|enum|class|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9]*)")
# Foundation's decoding errors and Swift's spellings of generic types.
PHRASES = [
    "DecodingError", "Cannot initialize", "Expected to decode", "No value associated with key",
    "debugDescription", "Swift.", "Int64", "Optional<", "Array<", "Dictionary<",
]


@functools.cache
def forbidden() -> list[str]:
    """Our type names (sorted) and the decoder's phrases."""
    names = set()
    for path in SOURCES.rglob("*.swift"):
        for name in DECLARATION.findall(path.read_text(encoding="utf-8", errors="replace")):
            if sum(character.isupper() for character in name) >= 2 and len(name) >= 6:
                names.add(name)
    return sorted(names) + PHRASES


def leaked(body: bytes | str, content_type: str | None, sent: str = "") -> str | None:
    """The first forbidden word a JSON answer's body holds, or None (and None for any other answer). A word that is in
    `sent` (what the request said: its target, headers and body) is the client's own, echoed, not a leak."""
    if not content_type or "json" not in content_type:
        return None
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    return next((word for word in forbidden() if word in text and word not in sent), None)


def check(body: bytes | str, content_type: str | None, sent: str = "") -> None:
    """Raises AssertionError, with the body, when a JSON answer names one of our types or a decoder's text that the
    request did not send."""
    word = leaked(body, content_type, sent)
    if word is not None:
        text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
        raise AssertionError(f"an answer names {word!r}: {text[:300]}")


def watch_http_client() -> None:
    """Checks every JSON body read through `http.client` (which `urllib.request` reads through too) from now on."""
    if getattr(http.client.HTTPResponse.read, "checks_answer_words", False):
        return
    original = http.client.HTTPResponse.read

    def read(self, amt=None):
        data = original(self, amt)
        # A body read in pieces is checked piece by piece, with the end of the previous piece before each.
        seen = getattr(self, "_answer_words_tail", b"")
        check(seen + data, self.getheader("Content-Type"))
        self._answer_words_tail = data[-64:]
        return data

    read.checks_answer_words = True
    http.client.HTTPResponse.read = read


if __name__ == "__main__":
    json.dump(forbidden(), sys.stdout)
