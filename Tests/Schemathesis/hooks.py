"""Schemathesis hooks for run.py: give the `{id}` routes real sessions, of the right system.

Generated ids match the document's pattern but name no session, so without help every `{id}` case would only
test the 404. Before a call, most such cases get the id of a live session instead (the rest keep theirs, so the
404 is still tested): events go to a session of the system whose events they are, a DELETE gets a session made
for it, a PUT a live one or a new id, any other (the reads, forks, resumes, the release) any live one, and half
the state, diff and fork cases revisions that session has. The stateful phase's ids come from its links and are
kept. The server's address comes from OPENAPI_TEST_BASE; choices are drawn from
a generator seeded by OPENAPI_TEST_SEED, so one seed gives one run (with one worker).
"""

import base64
import json
import os
import random
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import schemathesis
from schemathesis.core.parameters import ParameterLocation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ConformanceChecks"))
import answer_words  # noqa: E402

BASE = os.environ["OPENAPI_TEST_BASE"]
RANDOM = random.Random(int(os.environ.get("OPENAPI_TEST_SEED", "0")))
# Which system each client event type belongs to, as the systems publish them (run.py reads GET /v1/systems/{name}).
EVENT_SYSTEMS: dict[str, str] = json.loads(os.environ["OPENAPI_TEST_EVENT_SYSTEMS"])
SYSTEMS = tuple(sorted(set(EVENT_SYSTEMS.values())))
# Where an event the server will refuse anyway goes.
FALLBACK_SYSTEM = "counter" if "counter" in SYSTEMS else SYSTEMS[0]
# The share of `{id}` cases that get a live session's id.
REAL_ID_SHARE = 0.85

_sessions: dict[str, list[str]] = {}


def _request(method: str, path: str, body: object | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            text = response.read()
            answer_words.check(text, response.headers["Content-Type"])
            return response.status, json.loads(text) if text else {}
    except urllib.error.HTTPError as error:
        answer_words.check(error.read(), error.headers["Content-Type"])
        return error.code, {}


def _create(system: str) -> str:
    status, body = _request("POST", "/v1/sessions", {"system": system})
    if status != 201:
        raise RuntimeError(f"creating a {system} session for the run answered {status}")
    return body["id"]


def _live(system: str) -> str:
    """A session of `system` that still exists (cases may have deleted earlier ones)."""
    pool = _sessions.setdefault(system, [])
    while pool:
        candidate = RANDOM.choice(pool)
        if _request("GET", f"/v1/sessions/{candidate}")[0] == 200:
            return candidate
        pool.remove(candidate)
    created = _create(system)
    pool.append(created)
    return created


def _system_of(body: object) -> str:
    """The system whose events `body` holds (the fallback for anything the server will refuse anyway)."""
    if isinstance(body, dict):
        first = body
        if "type" not in body and isinstance(body.get("events"), list) and body["events"]:
            first = body["events"][0]
        if isinstance(first, dict) and isinstance(first.get("type"), str):
            return EVENT_SYSTEMS.get(first["type"], FALLBACK_SYSTEM)
    return FALLBACK_SYSTEM


def _system_of_session(session: str) -> str | None:
    """The system of a live session; None when no session has this id."""
    status, body = _request("GET", f"/v1/sessions/{session}")
    return body.get("system") if status == 200 else None


def _head(session: str) -> int | None:
    """The revision a live session is at; None when no session has this id."""
    status, body = _request("GET", f"/v1/sessions/{session}")
    return body.get("rev") if status == 200 else None


def _etag(session: str) -> str:
    request = urllib.request.Request(f"{BASE}/v1/sessions/{session}")
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.headers["ETag"]


_keys = 0


@schemathesis.hook
def before_call(context, case, kwargs):
    parameters = case.path_parameters or {}
    if "id" not in parameters or case.meta is None or case.meta.is_negative_at(ParameterLocation.PATH):
        return
    operation = case.operation.definition.raw.get("operationId")
    # The stateful phase follows links from a creation: its ids are real, and its checks watch what happens to them
    # (a session deleted must stay gone), so an id is changed there only where the document cannot say it is wrong.
    stateful = case.meta.phase.name == "stateful"
    if operation == "postEvents":
        # Events valid for the document are events of one system; the session must be of that system (the
        # stateful phase's links bring sessions of any system).
        system = _system_of(case.body)
        current = _system_of_session(parameters["id"])
        if current not in (None, system) or (current is None and not stateful and RANDOM.random() < REAL_ID_SHARE):
            parameters["id"] = _live(system)
        headers = case.headers if case.headers is not None else {}
        if not case.meta.is_negative_at(ParameterLocation.HEADER):
            # A made-up If-Match only ever tests the 412: name the session's current cursor instead.
            if "If-Match" in headers and _system_of_session(parameters["id"]) is not None:
                headers["If-Match"] = _etag(parameters["id"])
            # Keys are per session and remembered: a key drawn twice with another body is a 422. Make each unique.
            global _keys
            if "Idempotency-Key" in headers:
                _keys += 1
                headers["Idempotency-Key"] = f"{str(headers['Idempotency-Key'])[:200]}-{_keys}"
            # Numbered posts: Client-ID and Client-Sequence go together and not with an Idempotency-Key (the
            # document says so in words, it cannot in a schema); a client id is made unique like a key, so that a
            # number is never the replay of another case's answer.
            numbered = [name for name in ("Client-ID", "Client-Sequence") if name in headers]
            if len(numbered) == 1:
                del headers[numbered[0]]
            elif numbered:
                headers.pop("Idempotency-Key", None)
                _keys += 1
                headers["Client-ID"] = f"{str(headers['Client-ID'])[:40]}-{_keys}"
    elif operation == "putSession" and stateful:
        # A PUT to a session the run deleted would make it again (201), which the checks would take for a
        # deleted session still there.
        parameters["id"] = base64.urlsafe_b64encode(RANDOM.randbytes(16)).decode().rstrip("=")
    elif stateful or RANDOM.random() >= REAL_ID_SHARE:
        return
    elif operation == "deleteSession":
        parameters["id"] = _create(RANDOM.choice(SYSTEMS))
    elif operation == "putSession":
        # Half the time the id of a live session of the body's system, for the 200 (a state would make it 409).
        body = case.body if isinstance(case.body, dict) else {}
        if body.get("system") in SYSTEMS and "state" not in body and RANDOM.random() < 0.5:
            parameters["id"] = _live(body["system"])
        else:
            # A new id, for the 201: generated ids repeat, and a repeat with another body is only ever the 409.
            raw = base64.urlsafe_b64encode(RANDOM.randbytes(16)).decode().rstrip("=")
            parameters["id"] = raw
    else:
        # The reads (the session, its export, history, states and diff, its containment), the fork, the resumes and
        # the release: a live session of any system.
        parameters["id"] = _live(RANDOM.choice(SYSTEMS))
        # Generated revisions are nearly all past the session's head (a 404): half the state, diff and fork cases ask
        # for revisions it has, so that the recomputed states, patches and forks are what gets checked.
        if operation in ("sessionState", "sessionDiff", "forkSession") and RANDOM.random() < 0.5:
            head = _head(parameters["id"])
            if head is None:
                return

            def revision() -> int:
                return RANDOM.randint(max(0, head - 20), head)

            if operation == "sessionState" and "rev" in parameters:
                parameters["rev"] = revision()
            elif operation == "sessionDiff" and case.query is not None:
                if not case.meta.is_negative_at(ParameterLocation.QUERY):
                    case.query["from"], case.query["to"] = sorted((revision(), revision()))
            elif operation == "forkSession" and isinstance(case.body, dict) and "rev" in case.body:
                if not case.meta.is_negative_at(ParameterLocation.BODY):
                    case.body["rev"] = revision()


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but 501 for a method the server does not know (QUERY), which RFC 9110 (15.6.2) makes the
    right answer (schemathesis expects 405, the answer for a known method the resource does not take), and three answers
    the stateful checks misread. (The two server findings of the first runs, a counter at the integer limit that trapped
    a reducer and integers past 64 bits rounded into range, are fixed and are generated again.)"""
    if case.method.upper() == "QUERY" and response.status_code == 501:
        return False
    # The stateful checks take every 404 after a creation for a lost session (ST302) and every answer after a
    # deletion for a session still there (ST301). Three answers are neither: a PUT naming an unknown system and a fork
    # from a revision the session has not reached (those 404s are about the body), and a CORS preflight (answered from
    # the path's shape; it never looks the session up).
    code = getattr(failure, "code", None)
    if code == "ST302" and response.status_code == 404 and (
        b"problem:system-not-found" in response.content or b"problem:revision-not-found" in response.content
    ):
        return False
    if code == "ST301" and case.method.upper() == "OPTIONS":
        return False
    return True


@schemathesis.check
def no_type_names_in_answers(ctx, response, case):
    """No JSON answer names one of our Swift types or repeats a Swift decoder's text (the words answer_words.py
    derives from Sources/, as the Swift tests' helpers check them); the failure quotes the body."""
    content_type = response.headers.get("content-type")
    # Schemathesis sends any string, our words too; an answer that quotes the request (an unknown id, a refused
    # origin or method) echoes the client's words, which is no leak.
    request = response.request
    body = request.body.decode("utf-8", errors="replace") if isinstance(request.body, bytes) else str(request.body or "")
    sent = " ".join([urllib.parse.unquote(str(request.url)), *(f"{k}: {v}" for k, v in request.headers.items()), body])
    answer_words.check(response.content, content_type[0] if content_type else None, sent)
