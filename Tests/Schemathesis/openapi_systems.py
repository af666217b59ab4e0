#!/usr/bin/env python3
"""openapi.yaml's schemas of the built-in systems, written from what the server publishes.

The states and events of each system are described once, by the macros that derive them from its Swift types
(`GET /v1/systems/{name}`: `stateSchema`, `eventSchema`). openapi.yaml carries a copy so that a reader or a client
generator needs no server; this script writes that copy, between the two marker lines in `components.schemas`, so the
document never says something of its own about a system:

- `SystemName`: the systems served;
- `<Name>State`, `<Name>Event`: each system's published state and client-event schemas, as they are;
- `<Name>StateOut`: a state as the server writes it: the published schema with no other member
  (`unevaluatedProperties: false`);
- `Event`, `BatchEvents`, `StartingState`, `StateOut`, `SessionStateOut`: the unions and per-system conditions the
  document's routes refer to.

    python3 Tests/Schemathesis/openapi_systems.py --write   (make openapi)
    python3 Tests/Schemathesis/openapi_systems.py --check   (make test, through run.py: stale fails)

The server is the debug binary (or --binary), started on 127.0.0.1:0 with sessions in memory and stopped by its pid.
"""

import argparse
import difflib
import re
import sys
from pathlib import Path

import yaml

from run import ROOT, default_binary, published_schemas, start_server, stop_server

DOCUMENT = ROOT / "openapi.yaml"
BEGIN = "    # BEGIN systems: written by `make openapi` from GET /v1/systems/{name}; edit the systems, not this."
END = "    # END systems"


def component(name: str) -> str:
    """`traffic-light` → `TrafficLight`."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", name) if part)


def embedded(schema: dict) -> dict:
    """A published schema document as a schema of the OpenAPI document (3.1: JSON Schema 2020-12 as it is)."""
    return {key: value for key, value in schema.items() if key != "$schema"}


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def by_system(systems: list[dict], suffix: str) -> list[dict]:
    """One condition per system: a session object whose `system` names it has the system's `state`."""
    return [
        {
            "if": {"properties": {"system": {"const": system["name"]}}, "required": ["system"]},
            "then": {"properties": {"state": ref(component(system["name"]) + suffix)}},
        }
        for system in systems
    ]


def schemas(systems: list[dict]) -> dict:
    """The generated components, in the order they are written."""
    out: dict = {"SystemName": {"description": "A system the server hosts.", "enum": [s["name"] for s in systems]}}
    for system in systems:
        name = component(system["name"])
        for key in ("stateSchema", "eventSchema"):
            if key not in system:
                raise SystemExit(f"openapi: {system['name']} publishes no {key}")
        out[name + "State"] = {
            "description": f"A state of `{system['name']}` (its published `stateSchema`).",
            **embedded(system["stateSchema"]),
        }
        out[name + "StateOut"] = {
            "description": f"A state of `{system['name']}` as the server writes it: no other member.",
            "allOf": [ref(name + "State")],
            "unevaluatedProperties": False,
        }
        out[name + "Event"] = {
            "description": f"An event a client may post to `{system['name']}` (its published `eventSchema`).",
            **embedded(system["eventSchema"]),
        }
    names = [component(system["name"]) for system in systems]
    out["Event"] = {
        "description": "A client event of one of the systems; other members are ignored.",
        "oneOf": [ref(name + "Event") for name in names],
    }
    out["BatchEvents"] = {
        "description": "1 to 100 events of one system.",
        "oneOf": [{"type": "array", "minItems": 1, "maxItems": 100, "items": ref(name + "Event")} for name in names],
    }
    out["StateOut"] = {"anyOf": [ref(name + "StateOut") for name in names]}
    out["StartingState"] = {
        "description": "A creation's `state` is a state of the system it names.",
        "allOf": by_system(systems, "State"),
    }
    out["SessionStateOut"] = {
        "description": "A session's `state` is a state of its system as the server writes it.",
        "allOf": by_system(systems, "StateOut"),
    }
    return out


def section(systems: list[dict]) -> str:
    """The text between the markers: the components as block YAML, indented under `components.schemas`."""
    text = yaml.safe_dump(schemas(systems), sort_keys=False, width=112, allow_unicode=True, default_flow_style=None)
    return "".join("    " + line if line.strip() else line for line in text.splitlines(keepends=True))


def split(document: str) -> tuple[str, str, str]:
    """The document before the section (with the BEGIN line), the section, and the rest (from the END line)."""
    begin, end = document.find(BEGIN + "\n"), document.find(END + "\n")
    if begin < 0 or end < begin:
        raise SystemExit(f"openapi: the document has no section between {BEGIN!r} and {END!r}")
    start = begin + len(BEGIN) + 1
    return document[:start], document[start:end], document[end:]


def stale(systems: list[dict], document: Path = DOCUMENT) -> str | None:
    """A diff when the document's section is not what the systems publish; None when it is."""
    _, current, _ = split(document.read_text())
    wanted = section(systems)
    if current == wanted:
        return None
    diff = difflib.unified_diff(
        current.splitlines(keepends=True), wanted.splitlines(keepends=True), document.name, "published"
    )
    return "".join(diff)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", help="feedback-host (default: the debug build's), or a host of your own")
    parser.add_argument("--document", type=Path, default=DOCUMENT, help="the OpenAPI document (default: openapi.yaml)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite openapi.yaml's section")
    mode.add_argument("--check", action="store_true", help="fail when openapi.yaml's section is stale")
    arguments = parser.parse_args()
    log = ROOT / ".build" / "openapi-systems.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    server, base = start_server(arguments.binary or default_binary(), log, "warning")
    try:
        systems = published_schemas(base)
    finally:
        stop_server(server)
    if arguments.write:
        before, _, after = split(arguments.document.read_text())
        arguments.document.write_text(before + section(systems) + after)
        print(f"openapi: wrote the schemas of {len(systems)} systems")
        return 0
    diff = stale(systems, arguments.document)
    if diff:
        name = arguments.document.name
        print(f"{name}'s systems are not what the server publishes; run `make openapi`:\n{diff}", file=sys.stderr)
        return 1
    print(f"openapi: the schemas of {len(systems)} systems are what the server publishes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
