#!/usr/bin/env python3
"""The deployment files parse and agree with the Dockerfile and the server (part of `make test`).

The Kubernetes manifests, docker-compose.yml, HAProxy and nginx configurations must name the image, port, user,
configuration keys and probe paths that the Dockerfile and the server really use; the probe paths are checked on
a running feedback-host (SERVER_BINARY, default .build/debug/feedback-host), the proxy configurations with
`haproxy -c` and `nginx -t`. The replicas journal to PostgreSQL: compose's and the Kubernetes Deployment's journal
settings (URL without a password, the password from a secret file, the CloudNativePG Secret's keys) are checked
against each other, and compose's settings run two replicas on a private PostgreSQL that share one session.
"""

import glob
import http.client
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import sqlite3
import tempfile
import time
import unittest
import zlib

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dockerfile  # noqa: E402
import proxy_configs  # noqa: E402
from feedbackhost import Client, EventStream, Replica, new_session_id  # noqa: E402
from postgres_server import PostgresServer  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOYMENT = os.path.join(ROOT, "Deployment")


def read(path):
    with open(os.path.join(ROOT, path)) as handle:
        return handle.read()


def seconds(value):
    match = re.fullmatch(r"(\d+)(ms|s|m)?", str(value))
    number, unit = int(match.group(1)), match.group(2) or "s"
    return number / 1000 if unit == "ms" else number * 60 if unit == "m" else number


def kubernetes_objects():
    objects = {}
    for path in sorted(glob.glob(os.path.join(DEPLOYMENT, "kubernetes", "*.yaml"))):
        with open(path) as handle:
            for document in yaml.safe_load_all(handle):
                if document and document["kind"] != "Kustomization":
                    objects[(document["kind"], document["metadata"].get("name"))] = document
    return objects


def server_settings():
    """Every setting the server takes, with its default, as `feedback-host --help` lists them (the binary is the
    source of truth: it refuses any other flag or FEEDBACKHOST_ variable)."""
    binary = os.environ.get("SERVER_BINARY")
    if not binary:
        raise unittest.SkipTest("SERVER_BINARY is not set")
    text = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30, check=True).stdout
    settings = {}
    for flag, default in re.findall(r"^  --([a-z0-9-]+) \(.*; default (\S+)\)$", text, re.M):
        settings[flag.replace("-", ".")] = default
    return settings


def server_config_keys():
    """Every key the server reads, as FEEDBACKHOST_ environment variable names."""
    return {"FEEDBACKHOST_" + key.replace(".", "_").upper() for key in server_settings()}


def heartbeat_seconds():
    """The server's default SSE heartbeat interval: every proxy timeout on a stream must be longer."""
    return int(server_settings()["stream.heartbeat.ms"]) / 1000


def drain_seconds():
    """The shutdown deadline feedback-host gives itself after SIGTERM."""
    return int(server_settings()["shutdown.deadline.ms"]) / 1000


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def request_when_listening(port, secure, path, headers, timeout=20):
    """The status of one GET on 127.0.0.1:port (HTTPS without verifying the test's self-signed certificate), tried
    again while the proxy is still starting."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if secure:
                context = ssl.create_default_context()
                context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
                connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
            else:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                connection.request("GET", path, headers=headers)
                return connection.getresponse().status
            finally:
                connection.close()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class DeploymentFilesTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runtime = dockerfile.runtime_stage(os.path.join(ROOT, "Dockerfile"))
        cls.k8s = kubernetes_objects()
        with open(os.path.join(DEPLOYMENT, "docker-compose.yml")) as handle:
            cls.compose = yaml.safe_load(handle)
        cls.haproxy = read(proxy_configs.HAPROXY)
        cls.nginx = read(proxy_configs.NGINX)
        cls.workload = cls.k8s[("Deployment", "feedback-host")]
        cls.pod = cls.workload["spec"]["template"]["spec"]
        cls.container = cls.pod["containers"][0]
        cls.headless = cls.k8s[("Service", "feedback-host")]
        cls.k8s_haproxy = cls.k8s[("ConfigMap", "feedback-host-haproxy")]["data"]["haproxy.cfg"]

    def test_dockerfile_builds_the_static_release_binary_and_runs_it_as_a_non_root_user(self):
        text = read("Dockerfile")
        self.assertRegex(text, r"(?m)^FROM swift:6\.3-bookworm AS builder")
        self.assertIn(
            "swift build -c release --static-swift-stdlib -Xswiftc -DFEEDBACKHOST_NO_MANUAL_CLOCK --product feedback-host",
            text,
        )
        self.assertEqual(self.runtime.base, "debian:bookworm-slim")
        self.assertEqual(self.runtime.entrypoint, ["/usr/local/bin/feedback-host"])
        self.assertEqual(self.runtime.stopsignal, "SIGTERM")
        self.assertNotEqual(self.runtime.uid, 0)
        self.assertEqual(self.runtime.user_directive, "${APP_UID}:${APP_UID}")
        self.assertEqual(self.runtime.env["FEEDBACKHOST_HOST"], "0.0.0.0")
        self.assertEqual(int(self.runtime.env["FEEDBACKHOST_PORT"]), self.runtime.exposed_port)
        self.assertIn("/healthz", " ".join(self.runtime.healthcheck))
        self.assertTrue({"libcurl4", "zlib1g", "ca-certificates", "tzdata"} <= set(self.runtime.packages))

    def test_the_image_never_runs_on_a_clock_that_tests_move(self):
        # The image's binary is built without the manual clock (--clock manual and skip are refused at start), and
        # nothing that runs the image asks for another clock than the real one.
        self.assertIn("-Xswiftc -DFEEDBACKHOST_NO_MANUAL_CLOCK", read("Dockerfile"))
        named = dict(self.runtime.env)
        named.update({item["name"]: item.get("value") for item in self.container["env"]})
        for name, service in self.compose["services"].items():
            if name.startswith("feedback-host"):
                named.update(service["environment"])
        self.assertIn(named.get("FEEDBACKHOST_CLOCK", "system"), ["system"])
        self.assertNotIn("--clock", " ".join(self.container.get("args", []) + self.container.get("command", [])))

    def test_dockerignore_keeps_build_products_out_of_the_context(self):
        lines = read(".dockerignore").split()
        self.assertEqual(lines[lines.index("*"):][:4], ["*", "!Package.swift", "!Sources/", "!Plugins/"])

    def test_environment_variables_everywhere_are_keys_the_server_reads(self):
        known = server_config_keys()
        self.assertIn("FEEDBACKHOST_PORT", known)
        self.assertTrue({"FEEDBACKHOST_JOURNAL_URL", "FEEDBACKHOST_JOURNAL_PASSWORD_FILE"} <= known)
        named = set(self.runtime.env)
        named.update(item["name"] for item in self.container["env"] if item["name"].startswith("FEEDBACKHOST_"))
        for name, service in self.compose["services"].items():
            if name.startswith("feedback-host"):
                named.update(service["environment"])
        self.assertEqual(sorted(named - known), [])
        # Any other variable of the pod only feeds a FEEDBACKHOST_ value (Kubernetes' $(NAME)), defined before it.
        values = " ".join(str(item.get("value", "")) for item in self.container["env"]
                          if item["name"].startswith("FEEDBACKHOST_"))
        for index, item in enumerate(self.container["env"]):
            if not item["name"].startswith("FEEDBACKHOST_"):
                self.assertIn(f"$({item['name']})", values, item["name"])
                later = [e["name"] for e in self.container["env"][index + 1:] if f"$({item['name']})" in
                         str(e.get("value", ""))]
                self.assertTrue(later, item["name"])
                self.assertNotEqual(item["name"], "PGPASSWORD")  # the password comes as a file

    def test_kubernetes_workload_uses_the_image_port_user_and_probes_of_the_dockerfile(self):
        self.assertEqual(self.container["image"], self.compose["services"]["feedback-host-1"]["image"])
        port = self.container["ports"][0]
        self.assertEqual(port["containerPort"], self.runtime.exposed_port)
        env = {item["name"]: item.get("value") for item in self.container["env"]}
        self.assertEqual(int(env["FEEDBACKHOST_PORT"]), self.runtime.exposed_port)
        self.assertEqual(env["FEEDBACKHOST_HOST"], "0.0.0.0")
        self.assertEqual(self.container["readinessProbe"]["httpGet"], {"path": "/readyz", "port": port["name"]})
        self.assertEqual(self.container["livenessProbe"]["httpGet"], {"path": "/healthz", "port": port["name"]})
        pod = self.pod
        self.assertEqual(pod["securityContext"]["runAsUser"], self.runtime.uid)
        self.assertTrue(pod["securityContext"]["runAsNonRoot"])
        self.assertIn("cpu", self.container["resources"]["requests"])
        self.assertIn("memory", self.container["resources"]["limits"])

    def test_termination_grace_period_covers_the_pre_stop_delay_and_the_drain(self):
        command = self.container["lifecycle"]["preStop"]["exec"]["command"]
        self.assertEqual(command[0], "sleep")
        grace = self.pod["terminationGracePeriodSeconds"]
        self.assertGreater(grace, int(command[1]) + drain_seconds())
        compose_grace = self.compose["services"]["feedback-host-1"]["stop_grace_period"]
        self.assertGreater(seconds(compose_grace), drain_seconds())

    def test_services_and_disruption_budget_select_the_workloads_pods(self):
        labels = self.workload["spec"]["template"]["metadata"]["labels"]
        self.assertEqual(self.workload["spec"]["selector"]["matchLabels"], labels)
        headless = self.headless
        self.assertEqual(headless["spec"]["clusterIP"], "None")
        # Starting and draining pods stay in its DNS answer: HAProxy's /readyz checks decide who takes traffic.
        self.assertTrue(headless["spec"]["publishNotReadyAddresses"])
        self.assertEqual(headless["spec"]["selector"], labels)
        self.assertEqual(headless["spec"]["ports"][0]["port"], self.runtime.exposed_port)
        budget = self.k8s[("PodDisruptionBudget", "feedback-host")]
        self.assertEqual(budget["spec"]["selector"]["matchLabels"], labels)
        balancer = self.k8s[("Deployment", "feedback-host-haproxy")]
        front = self.k8s[("Service", "feedback-host-lb")]
        self.assertEqual(front["spec"]["selector"], balancer["spec"]["template"]["metadata"]["labels"])
        kustomization = yaml.safe_load(read("Deployment/kubernetes/kustomization.yaml"))
        files = {os.path.basename(p) for p in glob.glob(os.path.join(DEPLOYMENT, "kubernetes", "*.yaml"))}
        # Every manifest but the CloudNativePG example, which needs the operator's CRDs (applied by hand first).
        self.assertEqual(set(kustomization["resources"]), files - {"kustomization.yaml", "postgres-cnpg.yaml"})
        with open(os.path.join(DEPLOYMENT, "kubernetes", "postgres-cnpg.yaml")) as handle:
            self.assertEqual([d["kind"] for d in yaml.safe_load_all(handle) if d], ["Cluster"])

    def test_haproxy_routes_by_session_and_checks_readiness(self):
        for text in (self.haproxy, self.k8s_haproxy):
            backend = proxy_configs.haproxy_sections(text)["backend replicas"]
            self.assertIn("balance uri depth 3 path-only", backend)
            self.assertIn("hash-type consistent", backend)
            self.assertIn("option http-no-delay", backend)
            self.assertIn("http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host feedback-host", backend)
            defaults = proxy_configs.haproxy_sections(text)["defaults"]
            for name in ("client", "server"):
                value = next(d.split()[2] for d in defaults if d.startswith(f"timeout {name} "))
                self.assertGreater(seconds(value), heartbeat_seconds())

    def test_kubernetes_haproxy_differs_from_the_shipped_one_only_in_servers_and_resolvers(self):
        def routing(text):
            return {name: [d for d in lines if not d.startswith(("server ", "server-template ", "default-server "))]
                    for name, lines in proxy_configs.haproxy_sections(text).items()
                    if not name.startswith("resolvers")}

        self.assertEqual(routing(self.k8s_haproxy), routing(self.haproxy))

    def test_kubernetes_haproxy_finds_the_deployments_pods_through_dns(self):
        """Pods of a Deployment have no stable names: one server-template over the SRV records of the headless
        Service's named port, resolved by kube-dns (the pod's resolv.conf), with enough slots for the replicas and a
        rolling update's surge. Each record carries its pod's port (checks/kubernetes_dns_test.py runs it)."""
        sections = proxy_configs.haproxy_sections(self.k8s_haproxy)
        backend = sections["backend replicas"]
        self.assertEqual([d for d in backend if d.startswith("server ")], [])
        templates = [d.split() for d in backend if d.startswith("server-template ")]
        self.assertEqual(len(templates), 1)
        _, prefix, slots, address = templates[0][:4]
        namespace = self.workload["metadata"]["namespace"]
        # Kubernetes names a headless Service's SRV records _<port name>._<protocol>.<service>.<namespace>.svc...;
        # their port is the pods' port that the Service's port targets.
        port = self.headless["spec"]["ports"][0]
        self.assertEqual(address, f"_{port['name']}._{port.get('protocol', 'TCP').lower()}."
                                  f"{self.headless['metadata']['name']}.{namespace}.svc.cluster.local")
        self.assertEqual(port["targetPort"], self.container["ports"][0]["name"])
        self.assertEqual(self.container["ports"][0]["containerPort"], self.runtime.exposed_port)
        first, last = (int(n) for n in slots.split("-"))
        surge = self.workload["spec"]["strategy"]["rollingUpdate"]["maxSurge"]
        self.assertGreaterEqual(last - first + 1, self.workload["spec"]["replicas"] + surge)
        self.assertEqual(prefix, "feedback-host-")
        default_server = next(d.split() for d in backend if d.startswith("default-server "))
        resolvers = default_server[default_server.index("resolvers") + 1]
        self.assertEqual(default_server[default_server.index("init-addr") + 1], "none")
        self.assertIn("parse-resolv-conf", sections[f"resolvers {resolvers}"])
        # Health checks as shipped: a slot's pod takes traffic only while its /readyz answers 200.
        self.assertIn("check", default_server)
        self.assertEqual(default_server[default_server.index("inter") + 1], "2s")

    def test_compose_runs_three_replicas_that_the_proxies_name(self):
        services = self.compose["services"]
        replicas = sorted(name for name in services if name.startswith("feedback-host-"))
        self.assertEqual(replicas, ["feedback-host-1", "feedback-host-2", "feedback-host-3"])
        for name in replicas:
            self.assertEqual(services[name]["build"], {"context": "..", "dockerfile": "Dockerfile"})
            self.assertEqual(services[name]["expose"], [str(self.runtime.exposed_port)])
        expected = [f"{name}:{self.runtime.exposed_port}" for name in replicas]
        self.assertEqual(re.findall(r"(?m)^\s*server feedback-host-\d (\S+)", self.haproxy), expected)
        self.assertEqual(re.findall(r"(?m)^\s*server ([\w.-]+:\d+)", self.nginx), expected)
        for proxy, path in (("haproxy", "/usr/local/etc/haproxy/haproxy.cfg"), ("nginx", "/etc/nginx/nginx.conf")):
            source, target, _ = services[proxy]["volumes"][0].split(":")
            self.assertEqual(target, path)
            self.assertTrue(os.path.isfile(os.path.join(DEPLOYMENT, source)))
            self.assertEqual(set(services[proxy]["depends_on"]), set(replicas))
        self.assertTrue(os.path.isfile(os.path.join(DEPLOYMENT, "..", "Dockerfile")))

    def test_nginx_hashes_the_session_id_and_streams_unbuffered(self):
        self.assertRegex(self.nginx, r'"~\^/v1/sessions/\(\?<session_id>\[A-Za-z0-9_-\]\+\)" \$session_id;')
        self.assertRegex(self.nginx, r"hash \$feedbackhost_route consistent;")
        for directive in ("proxy_buffering off;", "proxy_http_version 1.1;", 'proxy_set_header Connection "";'):
            self.assertIn(directive, self.nginx)
        self.assertGreater(seconds(re.search(r"proxy_read_timeout (\w+);", self.nginx).group(1)),
                           heartbeat_seconds())

    def test_every_session_route_carries_the_id_as_the_third_path_segment(self):
        routes = set()
        for path in glob.glob(os.path.join(ROOT, "Sources", "**", "*.swift"), recursive=True):
            with open(path) as handle:
                routes.update(re.findall(r'"(/v1/sessions/[^"]*)"', handle.read()))
        self.assertIn("/v1/sessions/{id}/events", routes)
        for route in routes:
            if route == "/v1/sessions/":
                continue  # a prefix the web page's script appends an id to
            # A route pattern ({id}) or a path the server builds (Location: /v1/sessions/\(id)).
            self.assertRegex(route.split("/")[3], r"^(\{id\}|\\\([\w.]+\))$", route)

    def test_proxy_configurations_pass_their_own_checkers(self):
        with tempfile.TemporaryDirectory(prefix="deployment-test-") as workdir:
            # The certificates as mounted: one PEM with the key (compose), the key beside it (a Kubernetes TLS Secret).
            combined, certificate, _ = proxy_configs.self_signed_certificate(workdir)
            rendered = os.path.join(workdir, "haproxy.cfg")
            with open(rendered, "w") as handle:
                handle.write(proxy_configs.render_haproxy(self.haproxy, 18080, 18404, [18081, 18082, 18083],
                                                          tls_port=18443, certificate=combined))
            k8s = os.path.join(workdir, "haproxy-k8s.cfg")
            with open(k8s, "w") as handle:
                handle.write(proxy_configs.with_certificate(self.k8s_haproxy, certificate))
            for path in (rendered, k8s):
                result = subprocess.run(["haproxy", "-c", "-f", path], capture_output=True, text=True)
                self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            nginx = os.path.join(workdir, "nginx.conf")
            with open(nginx, "w") as handle:
                handle.write(proxy_configs.render_nginx(self.nginx, 18090, [18081, 18082, 18083], workdir))
            result = subprocess.run(["nginx", "-t", "-e", "stderr", "-c", nginx], capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_haproxy_terminates_tls_with_http2_from_a_mounted_secret(self):
        for text in (self.haproxy, self.k8s_haproxy):
            frontend = proxy_configs.haproxy_sections(text)["frontend feedback_host"]
            self.assertIn(f"bind :8443 ssl crt {proxy_configs.CERTIFICATE} alpn h2,http/1.1", frontend)
        haproxy = self.compose["services"]["haproxy"]
        self.assertEqual(haproxy["secrets"], [{"source": "haproxy-certificate", "target": proxy_configs.CERTIFICATE}])
        self.assertIn("8443:8443", haproxy["ports"])
        self.assertTrue(all(p.startswith("127.0.0.1:") for p in haproxy["ports"] if p != "8443:8443"))
        balancer = self.k8s[("Deployment", "feedback-host-haproxy")]["spec"]["template"]["spec"]
        mount = next(m for m in balancer["containers"][0]["volumeMounts"] if m["name"] == "tls")
        volume = next(v for v in balancer["volumes"] if v["name"] == "tls")
        paths = {item["key"]: os.path.join(mount["mountPath"], item["path"]) for item in volume["secret"]["items"]}
        self.assertEqual(paths, {"tls.crt": proxy_configs.CERTIFICATE, "tls.key": proxy_configs.CERTIFICATE + ".key"})
        front = self.k8s[("Service", "feedback-host-lb")]["spec"]["ports"]
        self.assertEqual([(p["port"], p["targetPort"]) for p in front], [(443, "https")])

    def test_proxies_never_log_a_token(self):
        """HAProxy (HTTPS and plain) and nginx with their shipped log formats: a token in the query, in
        Authorization and in the cookie reaches no log line, while the request itself is logged."""
        binary = os.environ.get("SERVER_BINARY", os.path.join(ROOT, ".build", "debug", "feedback-host"))
        token = "eyJ" + os.urandom(12).hex() + ".secret-token-marker"
        headers = {"Authorization": f"Bearer {token}", "Cookie": f"feedbackhost_token={token}"}
        path = f"/v1/sessions/{new_session_id()}/stream?access_token={token}&mode=patch"
        with tempfile.TemporaryDirectory(prefix="deployment-test-") as workdir:
            combined, _, _ = proxy_configs.self_signed_certificate(workdir)
            replica = Replica.start([binary, "--host", "127.0.0.1", "--port", "0", "--data-dir", "none"],
                                    name="feedback-host")
            ports = [free_port() for _ in range(4)]
            haproxy_config = os.path.join(workdir, "haproxy.cfg")
            with open(haproxy_config, "w") as handle:
                handle.write(proxy_configs.render_haproxy(self.haproxy, ports[0], ports[1], [replica.port] * 3,
                                                          tls_port=ports[2], certificate=combined))
            nginx_config = os.path.join(workdir, "nginx.conf")
            nginx_log = os.path.join(workdir, "nginx-access.log")
            with open(nginx_config, "w") as handle:
                handle.write(proxy_configs.render_nginx(self.nginx, ports[3], [replica.port] * 3, workdir, nginx_log))
            haproxy_log = os.path.join(workdir, "haproxy.log")
            proxies = []
            try:
                with open(haproxy_log, "wb") as out:
                    proxies.append(subprocess.Popen(["haproxy", "-db", "-f", haproxy_config], stdout=out,
                                                    stderr=subprocess.STDOUT, start_new_session=True))
                proxies.append(subprocess.Popen(["nginx", "-e", "stderr", "-c", nginx_config, "-g", "daemon off;"],
                                                stderr=subprocess.DEVNULL, start_new_session=True))
                for port, secure in ((ports[0], False), (ports[2], True), (ports[3], False)):
                    status = request_when_listening(port, secure, path, headers)
                    self.assertEqual(status, 404, port)  # the session does not exist; the request went through
            finally:
                for proxy in proxies:
                    proxy.terminate()
                    proxy.wait(timeout=10)
                self.assertEqual(replica.stop(), 0)
            for log_path, expected_lines in ((haproxy_log, 2), (nginx_log, 1)):
                with open(log_path) as handle:
                    text = handle.read()
                self.assertEqual(text.count("/stream"), expected_lines, text)
                self.assertNotIn(token, text)
                self.assertNotIn("access_token", text)

    def test_the_images_settings_refuse_a_request_without_a_token(self):
        """The Dockerfile's environment (host, port, data directory and the secret's path aside): tokens required,
        anyone may create a session and gets its tokens, nobody else may read or post without them."""
        binary = os.environ.get("SERVER_BINARY", os.path.join(ROOT, ".build", "debug", "feedback-host"))
        self.assertEqual(self.runtime.env["FEEDBACKHOST_AUTH"], "jwt")
        self.assertEqual(self.runtime.env["FEEDBACKHOST_AUTH_CREATE"], "open")
        with tempfile.TemporaryDirectory(prefix="deployment-test-") as workdir:
            key = os.path.join(workdir, "feedbackhost-auth-key")
            with open(key, "wb") as handle:
                handle.write(os.urandom(32))
            environment = dict(self.runtime.env, FEEDBACKHOST_HOST="127.0.0.1", FEEDBACKHOST_PORT="0",
                               FEEDBACKHOST_DATA_DIR=workdir, FEEDBACKHOST_AUTH_KEY_FILE=key,
                               PATH=os.environ["PATH"])
            server_log = os.path.join(workdir, "server.log")
            with open(server_log, "wb") as stderr:
                replica = Replica.start([binary], name="image-settings", env=environment, stderr=stderr)
            try:
                client = Client(replica.base_url)
                session = new_session_id()
                status, _, created = client.request("PUT", f"/v1/sessions/{session}", {"system": "counter"})
                self.assertEqual(status, 201)
                tokens = created["tokens"]
                self.assertEqual(set(tokens), {"read", "post", "admin"})
                event = {"type": "increment"}
                for method, route, body in (("GET", "", None), ("POST", "/events", event), ("DELETE", "", None)):
                    status, headers, problem = client.request(method, f"/v1/sessions/{session}{route}", body)
                    self.assertEqual(status, 401, (method, route))
                    self.assertEqual(headers["Content-Type"], "application/problem+json")
                    self.assertIn("token", problem["detail"])
                stream = EventStream(replica.base_url, f"/v1/sessions/{session}/stream")
                self.assertEqual(stream.status, 401)
                stream.close()
                bearer = {"Authorization": "Bearer " + tokens["read"]}
                self.assertEqual(client.request("POST", f"/v1/sessions/{session}/events", event, bearer)[0], 403)
                status, _, state = client.request("GET", f"/v1/sessions/{session}", headers=bearer)
                self.assertEqual((status, state["rev"]), (200, 0))
                bearer = {"Authorization": "Bearer " + tokens["post"]}
                self.assertEqual(client.request("POST", f"/v1/sessions/{session}/events", event, bearer)[0], 200)
                header, payload, signature = tokens["admin"].split(".")
                forged = ".".join([header, payload, ("B" if signature[0] == "A" else "A") + signature[1:]])
                bearer = {"Authorization": "Bearer " + forged}
                self.assertEqual(client.request("DELETE", f"/v1/sessions/{session}", headers=bearer)[0], 401)
                for token in (tokens["read"], forged):
                    stream = EventStream(replica.base_url, f"/v1/sessions/{session}/stream?access_token={token}")
                    self.assertEqual(stream.status, 200 if token == tokens["read"] else 401)
                    stream.close()
                client.close()
            finally:
                self.assertEqual(replica.stop(), 0)
            # Its standard error, access log included (JSON, as the image writes it), holds none of them.
            with open(server_log) as handle:
                text = handle.read()
            self.assertIn('"route":"/v1/sessions/{id}/stream"', text)
            for token in [*tokens.values(), forged]:
                self.assertNotIn(token, text)

    def test_the_image_without_its_secret_stops_at_once_saying_so(self):
        binary = os.environ.get("SERVER_BINARY", os.path.join(ROOT, ".build", "debug", "feedback-host"))
        with tempfile.TemporaryDirectory(prefix="deployment-test-") as workdir:
            missing = os.path.join(workdir, "feedbackhost-auth-key")
            environment = dict(self.runtime.env, FEEDBACKHOST_HOST="127.0.0.1", FEEDBACKHOST_PORT="0",
                               FEEDBACKHOST_DATA_DIR=workdir, FEEDBACKHOST_AUTH_KEY_FILE=missing,
                               PATH=os.environ["PATH"])
            result = subprocess.run([binary], env=environment, capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stdout, "")  # never listened
        self.assertIn(f"cannot read the key file {missing}", result.stderr)

    def test_a_server_on_an_address_other_machines_reach_needs_keys(self):
        """`--auth auto` (the default): open on loopback (every other test), tokens elsewhere; without a key the
        start stops before anything is bound."""
        binary = os.environ.get("SERVER_BINARY", os.path.join(ROOT, ".build", "debug", "feedback-host"))
        result = subprocess.run([binary, "--host", "0.0.0.0", "--port", "0", "--data-dir", "none"],
                                env={"PATH": os.environ["PATH"]}, capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertIn("--host 0.0.0.0 is reachable from other machines", result.stderr)
        self.assertIn("--auth off", result.stderr)

    def test_compose_and_kubernetes_mount_the_token_key_where_the_image_reads_it(self):
        path = self.runtime.env["FEEDBACKHOST_AUTH_KEY_FILE"]
        self.assertTrue(path.startswith("/run/secrets/"))
        for name, service in self.compose["services"].items():
            if name.startswith("feedback-host"):
                self.assertIn(os.path.basename(path), service["secrets"])
        self.assertIn(os.path.basename(path), self.compose["secrets"])
        mount = next(m for m in self.container["volumeMounts"] if m["mountPath"] == path)
        volume = next(v for v in self.pod["volumes"] if v["name"] == mount["name"])
        self.assertIn("secretName", volume["secret"])
        env = {item["name"] for item in self.container["env"]}
        self.assertNotIn("FEEDBACKHOST_AUTH", env)  # the image's setting holds

    def compose_replicas(self):
        return {name: service for name, service in self.compose["services"].items()
                if name.startswith("feedback-host-")}

    def test_compose_replicas_journal_to_postgresql_with_the_password_from_a_secret_file(self):
        services = self.compose["services"]
        postgres = services["postgres"]
        self.assertRegex(postgres["image"], r"^postgres:\d+$")  # the official image, a pinned major version
        database = postgres["environment"]
        secret_path = database["POSTGRES_PASSWORD_FILE"]
        secret = os.path.basename(secret_path)
        self.assertEqual(secret_path, f"/run/secrets/{secret}")
        self.assertEqual(postgres["secrets"], [secret])
        self.assertNotIn("POSTGRES_PASSWORD", database)
        # Its data on a named volume; its health check over TCP (the image's first-start server has no TCP).
        source, target = postgres["volumes"][0].split(":")
        self.assertEqual(target, "/var/lib/postgresql/data")
        self.assertIn(source, self.compose["volumes"])
        check = postgres["healthcheck"]["test"]
        self.assertEqual(check[:2], ["CMD", "pg_isready"])
        self.assertEqual(check[check.index("-h") + 1], "127.0.0.1")
        self.assertTrue(os.path.dirname(self.compose["secrets"][secret]["file"]) == "./secrets")
        port = postgres["expose"][0]
        for name, service in self.compose_replicas().items():
            env = service["environment"]
            url = env["FEEDBACKHOST_JOURNAL_URL"]
            # postgres://USER@HOST:PORT/DB, no password in it (the server refuses one there)
            self.assertEqual(url, f"postgres://{database['POSTGRES_USER']}@postgres:{port}/{database['POSTGRES_DB']}",
                             name)
            self.assertEqual(env["FEEDBACKHOST_JOURNAL_PASSWORD_FILE"], secret_path, name)
            self.assertIn(secret, service["secrets"])
            self.assertFalse({"PGPASSWORD", "FEEDBACKHOST_JOURNAL_PASSWORD"} & set(env))
            self.assertNotIn("command", service)
            self.assertEqual(service["depends_on"]["postgres"], {"condition": "service_healthy"})
            # Interchangeable: no volume of its own; the image's data directory is scratch.
            self.assertNotIn("volumes", service)
            self.assertEqual([t.split(":")[0] for t in service["tmpfs"]], [self.runtime.env["FEEDBACKHOST_DATA_DIR"]])
        self.assertEqual(list(self.compose["volumes"]), [source])

    def test_kubernetes_replicas_read_the_journal_from_the_cloudnativepg_app_secret(self):
        self.assertNotIn(("StatefulSet", "feedback-host"), self.k8s)
        self.assertNotIn("volumeClaimTemplates", self.workload["spec"])
        self.assertTrue(all("persistentVolumeClaim" not in v for v in self.pod["volumes"]))
        cluster = self.k8s[("Cluster", "feedback-host-db")]
        self.assertEqual(cluster["apiVersion"], "postgresql.cnpg.io/v1")
        self.assertEqual(cluster["metadata"]["namespace"], self.workload["metadata"]["namespace"])
        app_secret = cluster["metadata"]["name"] + "-app"  # what the operator makes for the database's owner
        # The keys CloudNativePG puts in that Secret (its docs, "Connecting from an application": Secrets).
        cnpg_keys = {"username", "user", "password", "host", "port", "dbname", "pgpass", "uri", "jdbc-uri"}
        env = self.container["env"]
        from_secret = {item["name"]: item["valueFrom"]["secretKeyRef"] for item in env if "valueFrom" in item}
        self.assertEqual({ref["name"] for ref in from_secret.values()}, {app_secret})
        self.assertTrue({ref["key"] for ref in from_secret.values()} <= cnpg_keys - {"password", "uri", "pgpass",
                                                                                     "jdbc-uri"})
        values = {item["name"]: item.get("value") for item in env}
        url = values["FEEDBACKHOST_JOURNAL_URL"]
        # Built from the Secret's user, host, port and database: postgres://USER@HOST:PORT/DB, no password.
        keys = {name: from_secret[name]["key"] for name in re.findall(r"\$\((\w+)\)", url)}
        self.assertEqual(re.sub(r"\$\((\w+)\)", lambda m: "{" + keys[m.group(1)] + "}", url),
                         "postgres://{username}@{host}:{port}/{dbname}")
        # The password: the Secret's `password` key, mounted as the file the server reads.
        path = values["FEEDBACKHOST_JOURNAL_PASSWORD_FILE"]
        mount = next(m for m in self.container["volumeMounts"] if m["mountPath"] == path)
        volume = next(v for v in self.pod["volumes"] if v["name"] == mount["name"])
        self.assertEqual(volume["secret"]["secretName"], app_secret)
        items = {item["path"]: item["key"] for item in volume["secret"].get("items", [])}
        self.assertEqual(items.get(mount["subPath"], mount["subPath"]), "password")
        # The Secret's host is the operator's read-write Service, <cluster>-rw, in the replicas' namespace; the
        # database and its owner are the ones the Cluster creates.
        initdb = cluster["spec"]["bootstrap"]["initdb"]
        self.assertTrue(initdb["database"] and initdb["owner"])
        self.assertNotIn("secret", initdb)  # else the operator would not make <cluster>-app
        # The image's data directory: scratch, no journal.
        data = next(m for m in self.container["volumeMounts"]
                    if m["mountPath"] == self.runtime.env["FEEDBACKHOST_DATA_DIR"])
        self.assertIn("emptyDir", next(v for v in self.pod["volumes"] if v["name"] == data["name"]))

    def test_two_replicas_with_the_compose_settings_serve_one_session_from_postgresql(self):
        """docker-compose.yml's replica environment on the image's settings, the host names replaced by 127.0.0.1 and
        a private PostgreSQL: a session created on one replica is posted to on both in turn (each takes it over from
        PostgreSQL; a stale copy's write is fenced and retried) and both read every increment; the password file is
        read (a missing one stops the start), and a URL holding a password is refused before anything starts."""
        binary = os.environ.get("SERVER_BINARY", os.path.join(ROOT, ".build", "debug", "feedback-host"))
        service = self.compose["services"]["feedback-host-1"]
        database = self.compose["services"]["postgres"]["environment"]
        postgres = PostgresServer()
        replicas = []
        try:
            postgres.create_database(database["POSTGRES_DB"])
            with tempfile.TemporaryDirectory(prefix="deployment-test-") as workdir:
                key = os.path.join(workdir, "auth.key")
                password = os.path.join(workdir, "journal-password")
                with open(key, "wb") as handle:
                    handle.write(os.urandom(32))
                with open(password, "w") as handle:
                    handle.write("not-needed-on-a-trust-database\n")
                url = service["environment"]["FEEDBACKHOST_JOURNAL_URL"]
                url = url.replace(f"{database['POSTGRES_USER']}@postgres:5432",
                                  f"{postgres.user}@127.0.0.1:{postgres.port}")
                self.assertNotEqual(url, service["environment"]["FEEDBACKHOST_JOURNAL_URL"])
                environment = dict(self.runtime.env)
                environment.update(service["environment"])
                environment.update(FEEDBACKHOST_HOST="127.0.0.1", FEEDBACKHOST_PORT="0", FEEDBACKHOST_DATA_DIR=workdir,
                                   FEEDBACKHOST_AUTH_KEY_FILE=key, FEEDBACKHOST_JOURNAL_URL=url,
                                   FEEDBACKHOST_JOURNAL_PASSWORD_FILE=password, PATH=os.environ["PATH"])
                refused = subprocess.run([binary], capture_output=True, text=True, timeout=30,
                                         env=dict(environment, FEEDBACKHOST_JOURNAL_URL=url.replace("@", ":pw@", 1)))
                self.assertEqual(refused.returncode, 2, refused.stderr)
                self.assertIn("is not a URL without a password", refused.stderr)
                missing = subprocess.run([binary], capture_output=True, text=True, timeout=30,
                                         env=dict(environment, FEEDBACKHOST_JOURNAL_PASSWORD_FILE=password + "-gone"))
                self.assertNotEqual(missing.returncode, 0)
                self.assertIn("cannot be read", missing.stderr)
                for index in (1, 2):
                    with open(os.path.join(workdir, f"replica-{index}.log"), "ab") as log:
                        replicas.append(Replica.start([binary], name=f"feedback-host-{index}", env=environment,
                                                      stderr=log))
                first, second = Client(replicas[0].base_url), Client(replicas[1].base_url)
                session = new_session_id()
                status, _, created = first.request("PUT", f"/v1/sessions/{session}", {"system": "counter"})
                self.assertEqual(status, 201)
                post = {"Authorization": "Bearer " + created["tokens"]["post"]}
                increment = {"type": "increment"}
                moved = 0
                for client in (first, second, first, second):
                    # A replica still holding a copy the other took over is fenced at its write: 503, nothing kept,
                    # and the same request again (same Idempotency-Key) takes the session back and is applied once.
                    keyed = dict(post, **{"Idempotency-Key": new_session_id()})
                    for _ in range(100):  # bounded: 100 tries 50 ms apart (the dropped copy goes asynchronously)
                        status, _, answer = client.request("POST", f"/v1/sessions/{session}/events", increment, keyed)
                        if status != 503:
                            break
                        self.assertIn("another replica", answer["detail"])
                        moved += 1
                        time.sleep(0.05)
                    self.assertEqual(status, 200, answer)
                self.assertGreater(moved, 0)  # the session did move between the two
                # The last writer holds it with all four (a read on the other would take it back first).
                status, _, state = second.request("GET", f"/v1/sessions/{session}", headers=post)
                self.assertEqual((status, state["state"], state["rev"]), (200, {"count": 4}, 4))
                first.close()
                second.close()
                for replica in replicas:
                    self.assertEqual(replica.stop(), 0)
                replicas = []
        finally:
            for replica in replicas:
                replica.stop()
            postgres.stop()

    def test_probe_and_health_check_paths_answer_200_on_the_server(self):
        binary = os.environ.get("SERVER_BINARY", os.path.join(ROOT, ".build", "debug", "feedback-host"))
        paths = {self.container["readinessProbe"]["httpGet"]["path"], self.container["livenessProbe"]["httpGet"]["path"]}
        paths.update(re.findall(r"http-check send meth GET uri (\S+)", self.haproxy))
        paths.update(re.findall(r"GET (/\w+) HTTP/1\.1", " ".join(self.runtime.healthcheck)))
        self.assertEqual(paths, {"/readyz", "/healthz"})
        replica = Replica.start([binary, "--host", "127.0.0.1", "--port", "0", "--data-dir", "none"], name="feedback-host")
        try:
            client = Client(replica.base_url)
            for path in sorted(paths):
                status, _, _ = client.request("GET", path)
                self.assertEqual(status, 200, path)
            client.close()
        finally:
            self.assertEqual(replica.stop(), 0)

    def test_the_health_check_command_passes_on_a_serving_replica_and_fails_on_a_stopped_one(self):
        binary = os.environ.get("SERVER_BINARY", os.path.join(ROOT, ".build", "debug", "feedback-host"))
        command = self.runtime.healthcheck
        self.assertNotIn("curl", " ".join(command))
        replica = Replica.start([binary, "--host", "127.0.0.1", "--port", "0", "--data-dir", "none"], name="feedback-host")
        environment = {"PATH": os.environ["PATH"], "FEEDBACKHOST_PORT": str(replica.port)}
        try:
            serving = subprocess.run(command, env=environment, capture_output=True, timeout=10)
        finally:
            self.assertEqual(replica.stop(), 0)
        stopped = subprocess.run(command, env=environment, capture_output=True, timeout=10)
        self.assertEqual(serving.returncode, 0, serving.stderr)
        self.assertNotEqual(stopped.returncode, 0)


def record_checksum(*fields):
    """The journal's row checksum (SessionJournal's RecordChecksum): CRC-32 over each field with its length before it;
    an int is 8 little-endian bytes."""
    crc = 0
    for field in fields:
        data = field.to_bytes(8, "little") if isinstance(field, int) else field.encode()
        crc = zlib.crc32(len(data).to_bytes(4, "little"), crc)
        if data:
            crc = zlib.crc32(data, crc)
    return crc


class VerifyTests(unittest.TestCase):
    """`feedback-host verify` and `--verify-on-start` on a journal the server itself wrote (issue 22)."""

    def setUp(self):
        self.binary = os.environ.get("SERVER_BINARY", os.path.join(ROOT, ".build", "debug", "feedback-host"))
        self.data = tempfile.mkdtemp(prefix="fh-verify-")
        self.addCleanup(shutil.rmtree, self.data, ignore_errors=True)

    def serve(self, *flags):
        return Replica.start([self.binary, "--host", "127.0.0.1", "--port", "0", "--data-dir", self.data, *flags],
                             name="feedback-host")

    def verify(self, *flags):
        return subprocess.run([self.binary, "verify", "--data-dir", self.data, *flags], capture_output=True,
                              text=True, timeout=120)

    def test_verify_reproduces_a_journal_and_finds_a_changed_state_at_its_revision(self):
        replica = self.serve()
        sessions = []
        try:
            client = Client(replica.base_url)
            for system, events in [("counter", [{"type": "increment"}, {"type": "add", "amount": 5}]),
                                   ("catch", [{"type": "throwToMachine"}]),
                                   ("traffic-light", [{"type": "start"}, {"type": "stop"}])]:
                status, _, body = client.request("POST", "/v1/sessions", {"system": system})
                self.assertEqual(status, 201)
                sessions.append(body["id"])
                for event in events:
                    status, _, _ = client.request("POST", f"/v1/sessions/{body['id']}/events", event)
                    self.assertEqual(status, 200)
            status, _, fixture = client.request("GET", f"/v1/sessions/{sessions[0]}/export")
            self.assertEqual(status, 200)
            self.assertEqual([event["type"] for event in fixture["events"]], ["increment", "add"])
            client.close()
        finally:
            self.assertEqual(replica.stop(), 0)

        clean = self.verify()
        self.assertEqual(clean.returncode, 0, clean.stderr)
        self.assertRegex(clean.stdout, r"total: 3 sessions, \d+ events: 3 identical, 0 migrated, 0 diverged, 0 failed")

        # The counter's second event is journaled with another state's checksum, as a build with another reducer
        # would have written it: verify names that session and revision, and exits 1 past --max-divergent 0.
        database = sqlite3.connect(os.path.join(self.data, "journal.sqlite"))
        row = database.execute("SELECT seq, session, rev, origin, event, version, at FROM events "
                               "WHERE session = ? AND rev = 2", (sessions[0],)).fetchone()
        seq, session, revision, origin, event, version, at = row
        wrong = 12345
        crc = record_checksum(session, revision ^ (origin << 63), event, version, at, wrong, 1)
        database.execute("UPDATE events SET state_sum = ?, crc = ? WHERE seq = ?", (wrong, crc, seq))
        database.commit()
        database.close()
        changed = self.verify()
        self.assertEqual(changed.returncode, 1, changed.stdout + changed.stderr)
        self.assertIn("1 diverged", changed.stdout)
        self.assertIn(f"diverged counter {sessions[0]}: first at revision 2", changed.stdout)
        self.assertEqual(self.verify("--max-divergent", "1").returncode, 0)
        missing = subprocess.run([self.binary, "verify", "--data-dir", os.path.join(self.data, "typo")],
                                 capture_output=True, text=True, timeout=60)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("there is no journal", missing.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.data, "typo")))

        # A replica verifying on start takes no traffic while this build does not reproduce its journal.
        gated = self.serve("--verify-on-start")
        try:
            client = Client(gated.base_url)
            deadline = time.monotonic() + 60
            while True:
                status, _, problem = client.request("GET", "/readyz")
                if problem is None or not problem["type"].endswith(":verifying") or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            self.assertEqual(status, 503)
            self.assertTrue(problem["type"].endswith(":verification-failed"), problem)
            client.close()
        finally:
            self.assertEqual(gated.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
