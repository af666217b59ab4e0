"""Reads what the checks need from the Dockerfile's last (runtime) stage, so that they cannot drift from it."""

import json
import re
import shlex
from dataclasses import dataclass, field


@dataclass
class RuntimeStage:
    base: str
    packages: list
    user: str
    uid: int
    env: dict = field(default_factory=dict)
    exposed_port: int = 0
    healthcheck: list = field(default_factory=list)
    healthcheck_options: dict = field(default_factory=dict)
    entrypoint: list = field(default_factory=list)
    stopsignal: str = ""
    user_directive: str = ""
    useradd: list = field(default_factory=list)


def instructions(path):
    """(INSTRUCTION, arguments) pairs with line continuations joined and comments dropped."""
    result, pending = [], ""
    with open(path) as handle:
        for raw in handle:
            line = raw.rstrip("\n")
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            line = pending + line
            pending = ""
            keyword, _, rest = line.strip().partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


def runtime_stage(path):
    """The last stage's base image, ARG defaults, ENV, EXPOSE, HEALTHCHECK, STOPSIGNAL and ENTRYPOINT."""
    stages = []
    for keyword, rest in instructions(path):
        if keyword == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((keyword, rest))
    stage = stages[-1]
    base = stage[0][1].split()[0]
    args, env, exposed, health, health_options, entrypoint, stopsignal, user = {}, {}, 0, [], {}, [], "", ""
    useradd = []
    for keyword, rest in stage[1:]:
        if keyword == "ARG":
            name, _, value = rest.partition("=")
            args[name] = shlex.split(value)[0] if value else ""
        elif keyword == "ENV":
            for pair in shlex.split(rest):
                name, _, value = pair.partition("=")
                env[name] = value
        elif keyword == "EXPOSE":
            exposed = int(rest.split()[0].split("/")[0])
        elif keyword == "HEALTHCHECK":
            options, _, command = rest.partition("CMD ")
            health = json.loads(command)
            health_options = dict(re.findall(r"--([a-z-]+)=(\S+)", options))
        elif keyword == "ENTRYPOINT":
            entrypoint = json.loads(rest)
        elif keyword == "STOPSIGNAL":
            stopsignal = rest
        elif keyword == "USER":
            user = rest
        elif keyword == "RUN" and "useradd" in rest:
            command = "useradd" + rest.split("useradd", 1)[1].split("&&", 1)[0]
            for name, value in args.items():
                command = command.replace("${" + name + "}", value)
            useradd = shlex.split(command)
    return RuntimeStage(
        base=base,
        packages=args["RUNTIME_PACKAGES"].split(),
        user=args["APP_USER"],
        uid=int(args["APP_UID"]),
        env=env,
        exposed_port=exposed,
        healthcheck=health,
        healthcheck_options=health_options,
        entrypoint=entrypoint,
        stopsignal=stopsignal,
        user_directive=user,
        useradd=useradd,
    )
