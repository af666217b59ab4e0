#!/usr/bin/env python3
"""make container-check: proves the Dockerfile's runtime stage without a Docker engine.

Builds (or reuses, under .build/) a Debian 12 minbase root with debootstrap holding exactly the packages the
Dockerfile's runtime stage installs, creates the same non-root user, copies the release binary to the ENTRYPOINT
path, then runs it with chroot as that user and checks: no library is "not found" (ldd inside the root), the
HEALTHCHECK command itself succeeds inside the root, /healthz and /readyz answer 200, and one session works end
to end (create with PUT, post events, read), with the root mounted read-only, then `feedback-host verify` on the
journal it wrote. Needs root (debootstrap, chroot, mount). Every process it starts is stopped.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dockerfile  # noqa: E402
import feedbackhost  # noqa: E402

SUITE = "bookworm"


def log(message):
    print(f"container-check: {message}", flush=True)


def mirror_from_apt_sources():
    """The Debian mirror this machine's apt uses (deb822 or one-line sources), else deb.debian.org."""
    candidates = []
    for directory, names in (("/etc/apt/sources.list.d", None), ("/etc/apt", ["sources.list"])):
        try:
            files = names or sorted(os.listdir(directory))
        except FileNotFoundError:
            continue
        for name in files:
            path = os.path.join(directory, name)
            if not (name.endswith(".sources") or name.endswith(".list")) or not os.path.isfile(path):
                continue
            with open(path) as handle:
                for line in handle:
                    line = line.strip()
                    match = re.match(r"URIs:\s*(\S+)", line) or re.match(r"deb\s+(?:\[[^]]*\]\s+)?(\S+)", line)
                    if match and "security" not in match.group(1):
                        candidates.append(match.group(1))
    return candidates[0] if candidates else "http://deb.debian.org/debian"


def ensure_root_filesystem(cache_dir, packages, mirror):
    """A debootstrapped root for `packages`, rebuilt only when the package list changes."""
    key = hashlib.sha256(" ".join(sorted(packages)).encode()).hexdigest()[:12]
    root = os.path.join(cache_dir, f"{SUITE}-minbase-{key}")
    stamp = os.path.join(root, ".container-check-packages")
    if os.path.exists(stamp):
        log(f"reusing {root} (packages: {' '.join(packages)})")
        return root
    partial = root + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(cache_dir, exist_ok=True)
    log(f"debootstrap --variant=minbase --include={','.join(packages)} {SUITE} from {mirror} (a few minutes)")
    started = time.monotonic()
    subprocess.run(
        ["debootstrap", "--variant=minbase", f"--include={','.join(packages)}", SUITE, partial, mirror],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with open(os.path.join(partial, ".container-check-packages"), "w") as handle:
        handle.write(" ".join(packages) + "\n")
    shutil.rmtree(root, ignore_errors=True)
    os.rename(partial, root)
    log(f"root file system ready in {time.monotonic() - started:.0f} s")
    return root


def installed_packages(root, packages):
    """Fails unless every runtime package is installed in the root."""
    output = subprocess.run(
        ["chroot", root, "dpkg-query", "-W", "-f=${Package} ${Status}\\n", *packages],
        check=False,
        capture_output=True,
        text=True,
    ).stdout
    missing = [p for p in packages if f"{p} install ok installed" not in output]
    if missing:
        raise SystemExit(f"container-check: packages not installed in the root: {missing}")


def ensure_user(root, runtime):
    """The Dockerfile's non-root user, created with the Dockerfile's own useradd command."""
    check = subprocess.run(["chroot", root, "id", "-u", runtime.user], capture_output=True, text=True)
    if check.returncode == 0:
        if check.stdout.strip() != str(runtime.uid):
            raise SystemExit(f"container-check: user {runtime.user} exists with uid {check.stdout.strip()}")
        return
    log(f"in the root: {' '.join(runtime.useradd)}")
    subprocess.run(["chroot", root, *runtime.useradd], check=True)


def check_libraries(root, binary_path):
    """ldd inside the root: every NEEDED library resolves to a file the packages installed."""
    result = subprocess.run(["chroot", root, "ldd", binary_path], capture_output=True, text=True)
    if result.returncode != 0 or "not found" in result.stdout:
        raise SystemExit(f"container-check: the binary needs a library the runtime stage does not install\n"
                         f"{result.stdout}{result.stderr}")
    needed = subprocess.run(["readelf", "-d", os.path.join(root, binary_path.lstrip("/"))],
                            capture_output=True, text=True, check=True).stdout
    names = re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", needed)
    resolved = [line.split()[0] for line in result.stdout.splitlines() if "=>" in line]
    log(f"NEEDED: {' '.join(names)}; ldd inside the root resolves all {len(resolved)} libraries, none not found")
    if any(name.startswith("libswift") or name.startswith("libFoundation") or name.startswith("libdispatch")
           for name in names):
        raise SystemExit("container-check: the binary links the Swift runtime dynamically (use --static-swift-stdlib)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dockerfile", default="Dockerfile")
    parser.add_argument("--binary", default=".build/release/feedback-host")
    parser.add_argument("--cache", default=".build/container-root")
    parser.add_argument("--mirror", default=None)
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("container-check: needs root (debootstrap, chroot, mount)")

    started = time.monotonic()
    runtime = dockerfile.runtime_stage(args.dockerfile)
    log(f"runtime stage: FROM {runtime.base}, packages {' '.join(runtime.packages)}, user {runtime.user} "
        f"({runtime.uid}), EXPOSE {runtime.exposed_port}, ENTRYPOINT {runtime.entrypoint}")
    if runtime.base != "debian:bookworm-slim":
        raise SystemExit(f"container-check: expected a debian:bookworm-slim runtime stage, found {runtime.base}")

    root = ensure_root_filesystem(args.cache, runtime.packages, args.mirror or mirror_from_apt_sources())
    installed_packages(root, runtime.packages)
    ensure_user(root, runtime)
    binary_path = runtime.entrypoint[0]
    target = os.path.join(root, binary_path.lstrip("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy2(args.binary, target)
    os.chmod(target, 0o755)
    check_libraries(root, binary_path)

    # The server runs in a read-only view of the root, as with readOnlyRootFilesystem (Kubernetes) and read_only
    # (compose), with /proc mounted as a container runtime would.
    view = root + ".read-only"
    proc_dir = os.path.join(view, "proc")
    os.makedirs(view, exist_ok=True)
    # The image's journal directory (FEEDBACKHOST_DATA_DIR, a VOLUME): made as the Dockerfile's RUN makes it, and
    # mounted writable (a tmpfs owned by the user) over the read-only view, as a container runtime mounts a volume.
    data_dir = runtime.env.get("FEEDBACKHOST_DATA_DIR")
    if not data_dir:
        raise SystemExit("container-check: the Dockerfile sets no FEEDBACKHOST_DATA_DIR for the journal")
    os.makedirs(root + data_dir, exist_ok=True)
    # The token key (FEEDBACKHOST_AUTH_KEY_FILE): a secret mounted read-only, as compose and Kubernetes mount it.
    key_path = runtime.env.get("FEEDBACKHOST_AUTH_KEY_FILE")
    if not key_path:
        raise SystemExit("container-check: the Dockerfile sets no FEEDBACKHOST_AUTH_KEY_FILE")
    secrets_dir = os.path.dirname(key_path)
    os.makedirs(root + secrets_dir, exist_ok=True)
    mounted = []
    server = None
    try:
        for command in (["mount", "--bind", root, view], ["mount", "-o", "remount,bind,ro", view],
                        ["mount", "-t", "proc", "proc", proc_dir],
                        ["mount", "-t", "tmpfs", "-o", f"uid={runtime.uid},gid={runtime.uid},mode=0700", "tmpfs",
                         view + data_dir],
                        ["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", view + secrets_dir]):
            subprocess.run(command, check=True)
            if command[1] != "-o":
                mounted.insert(0, command[-1])
        with open(view + key_path, "wb") as handle:
            handle.write(os.urandom(32))
        os.chown(view + key_path, runtime.uid, runtime.uid)
        os.chmod(view + key_path, 0o400)
        root = view
        # The image's environment, except that the check listens on loopback only, on a free port.
        environment = dict(runtime.env)
        environment.update({"FEEDBACKHOST_HOST": "127.0.0.1", "FEEDBACKHOST_PORT": "0", "PATH": "/usr/bin:/bin"})
        command = ["chroot", f"--userspec={runtime.uid}:{runtime.uid}", root, "env", "-i",
                   *[f"{k}={v}" for k, v in sorted(environment.items())], *runtime.entrypoint]
        # The image's binary is built without the manual clock: asked for one, it refuses to start.
        refused = subprocess.run(
            ["chroot", f"--userspec={runtime.uid}:{runtime.uid}", root, "env", "-i",
             *[f"{k}={v}" for k, v in sorted(environment.items())], "FEEDBACKHOST_CLOCK=manual", *runtime.entrypoint],
            capture_output=True, text=True, timeout=30,
        )
        if refused.returncode == 0 or "without the manual clock" not in refused.stderr:
            raise SystemExit(f"container-check: FEEDBACKHOST_CLOCK=manual was not refused ({refused.returncode}): "
                             f"{refused.stderr[-500:]}")
        log("FEEDBACKHOST_CLOCK=manual: refused at start (the image has no manual clock)")
        server = feedbackhost.Replica.start(command, name="chroot")
        log(f"serving inside the read-only root as uid {runtime.uid} on {server.base_url}")
        uid_line = subprocess.run(["ps", "-o", "uid=", "-p", str(server.process.pid)], capture_output=True,
                                  text=True).stdout.strip()
        if uid_line != str(runtime.uid):
            raise SystemExit(f"container-check: the server runs as uid {uid_line}, not {runtime.uid}")
        log(f"ps: the server process runs as uid {uid_line}")

        # The Dockerfile's HEALTHCHECK, run inside the root as the user, as Docker would run it.
        health_env = dict(environment, FEEDBACKHOST_PORT=str(server.port))
        health = subprocess.run(
            ["chroot", f"--userspec={runtime.uid}:{runtime.uid}", root, "env", "-i",
             *[f"{k}={v}" for k, v in sorted(health_env.items())], *runtime.healthcheck],
            capture_output=True, text=True, timeout=10,
        )
        if health.returncode != 0:
            raise SystemExit(f"container-check: HEALTHCHECK failed ({health.returncode}): {health.stderr}")
        log("HEALTHCHECK command: exit 0")

        client = feedbackhost.Client(server.base_url)
        for path in ("/healthz", "/readyz"):
            status, _, _ = client.request("GET", path)
            if status != 200:
                raise SystemExit(f"container-check: GET {path} answered {status}")
        session = feedbackhost.new_session_id()
        status, _, created = client.request("PUT", f"/v1/sessions/{session}", {"system": "counter"})
        if status != 201 or set(created.get("tokens", {})) != {"read", "post", "admin"}:
            raise SystemExit(f"container-check: PUT /v1/sessions/{session} answered {status}: {created}")
        tokens = created["tokens"]
        status, _, _ = client.request("GET", f"/v1/sessions/{session}")
        if status != 401:
            raise SystemExit(f"container-check: a GET without a token answered {status}, expected 401")
        status, _, posted = client.request("POST", f"/v1/sessions/{session}/events",
                                           {"events": [{"type": "add", "amount": 5}, {"type": "increment"}]},
                                           {"Authorization": "Bearer " + tokens["post"]})
        if status != 200 or posted["state"] != {"count": 6}:
            raise SystemExit(f"container-check: posting events answered {status}: {posted}")
        status, _, read = client.request("GET", f"/v1/sessions/{session}",
                                         headers={"Authorization": "Bearer " + tokens["read"]})
        if status != 200 or read["state"] != {"count": 6} or read["rev"] != posted["rev"]:
            raise SystemExit(f"container-check: reading the session answered {status}: {read}")
        log(f"session {session}: created (with its tokens; 401 without one), 2 events posted, read back count 6 at "
            f"rev {read['rev']}")
        code = server.stop()
        if code != 0:
            raise SystemExit(f"container-check: SIGTERM ended the server with {code}, expected 0")
        log("SIGTERM: exit 0")

        # `feedback-host verify` in the image, on the journal the server just wrote: this build reproduces it.
        verified = subprocess.run(
            ["chroot", f"--userspec={runtime.uid}:{runtime.uid}", root, "env", "-i",
             *[f"{k}={v}" for k, v in sorted(environment.items())], *runtime.entrypoint, "verify"],
            capture_output=True, text=True, timeout=60,
        )
        if verified.returncode != 0 or "total: 1 sessions" not in verified.stdout or "1 identical" not in verified.stdout:
            raise SystemExit(f"container-check: feedback-host verify exited {verified.returncode}: "
                             f"{verified.stdout[-500:]} {verified.stderr[-500:]}")
        log(f"feedback-host verify on the journal: {verified.stdout.strip().splitlines()[-2]}")
    finally:
        if server is not None:
            server.stop()
        for directory in mounted:
            subprocess.run(["umount", directory], check=False)
    log(f"passed in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
