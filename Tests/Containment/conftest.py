"""Every JSON answer these tests read through http.client or urllib is checked for our Swift type names
(Tests/ConformanceChecks/answer_words.py, the words derived from Sources/)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ConformanceChecks"))
import answer_words  # noqa: E402

answer_words.watch_http_client()
