"""Reads the shipped HAProxy and nginx configurations and fills in loopback addresses for a local run (the template
step): the routing, checks and timeouts stay as shipped."""

import re

HAPROXY = "Deployment/haproxy/haproxy.cfg"
NGINX = "Deployment/nginx/nginx.conf"


def haproxy_sections(text):
    """{"backend replicas": [directive lines], ...} with comments and blank lines dropped."""
    result, current = {}, None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not raw.startswith((" ", "\t")):
            current = line.strip()
            result[current] = []
        elif current is not None:
            result[current].append(" ".join(line.split()))
    return result


CERTIFICATE = "/etc/haproxy/certs/feedbackhost.pem"


def with_certificate(text, certificate):
    """The configuration with the mounted secret's path replaced by `certificate` (a test's self-signed one)."""
    if f"crt {CERTIFICATE} " not in text:
        raise ValueError(f"the configuration names no certificate at {CERTIFICATE}")
    return text.replace(f"crt {CERTIFICATE} ", f"crt {certificate} ")


def render_haproxy(text, frontend_port, stats_port, replica_ports, tls_port=None, certificate=None):
    """The same configuration bound to 127.0.0.1: one port per `server` line, in order, and no DNS resolution. The
    HTTPS bind listens on `tls_port` with `certificate`, or is left out when no `tls_port` is given."""
    servers = re.findall(r"^(\s*server\s+\S+\s+)\S+", text, flags=re.M)
    if len(servers) != len(replica_ports):
        raise ValueError(f"the configuration has {len(servers)} servers, the run has {len(replica_ports)} replicas")
    ports = iter(replica_ports)
    text = re.sub(r"^(\s*server\s+\S+\s+)\S+", lambda m: f"{m.group(1)}127.0.0.1:{next(ports)}", text, flags=re.M)
    # Loopback addresses need no resolver; the rest of `default-server` (checks, intervals) stays as shipped.
    text = re.sub(r" resolvers \S+", "", text)
    text = re.sub(r" init-addr \S+", "", text)
    text = re.sub(r"^resolvers .*?(?=^\S)", "", text, flags=re.M | re.S)
    if certificate is not None:
        text = with_certificate(text, certificate)
    return _bind_loopback(text, frontend_port, stats_port, tls_port)


def render_haproxy_resolved(text, frontend_port, stats_port, tls_port, certificate, nameserver_port):
    """A configuration that finds its servers through DNS (the Kubernetes one: `server-template` and a resolvers
    section reading the pod's resolv.conf) bound to 127.0.0.1: its resolvers ask the DNS server on
    127.0.0.1:`nameserver_port` instead of resolv.conf's, its binds listen on the given ports, its HTTPS bind with
    `certificate`. Nothing else changes (`changed_lines` lists what did)."""
    if text.count("parse-resolv-conf") != 1:
        raise ValueError("the configuration has no single parse-resolv-conf to point at a test DNS server")
    text = text.replace("parse-resolv-conf", f"nameserver t 127.0.0.1:{nameserver_port}")
    return _bind_loopback(with_certificate(text, certificate), frontend_port, stats_port, tls_port)


def changed_lines(shipped, rendered):
    """[(shipped line, rendered line)] for every line that differs; ValueError if lines were added or removed."""
    before, after = shipped.splitlines(), rendered.splitlines()
    if len(before) != len(after):
        raise ValueError(f"{len(before)} lines became {len(after)}")
    return [(old, new) for old, new in zip(before, after) if old != new]


def _bind_loopback(text, frontend_port, stats_port, tls_port):
    binds = {"feedback_host": frontend_port, "stats": stats_port}
    rendered, current = [], None
    for line in text.splitlines():
        if line and not line.startswith((" ", "\t")):
            current = line.split()[-1] if line.startswith("frontend") else None
        if current in binds and line.strip().startswith("bind "):
            if " ssl " in line:
                if tls_port is None:
                    continue
                line = re.sub(r"bind \S+", f"bind 127.0.0.1:{tls_port}", line)
            else:
                line = re.sub(r"bind \S+", f"bind 127.0.0.1:{binds[current]}", line)
        rendered.append(line)
    return "\n".join(rendered) + "\n"


def render_nginx(text, port, replica_ports, workdir, access_log=None):
    """The same nginx configuration on 127.0.0.1 with one port per upstream `server`, its files under `workdir`; its
    access log (in the shipped format) goes to `access_log`, or nowhere."""
    upstream_server = r"^(\s*server\s+)[\w.-]+:\d+"
    servers = re.findall(upstream_server, text, flags=re.M)
    if len(servers) != len(replica_ports):
        raise ValueError(f"the configuration has {len(servers)} servers, the run has {len(replica_ports)} replicas")
    ports = iter(replica_ports)
    text = re.sub(upstream_server, lambda m: f"{m.group(1)}127.0.0.1:{next(ports)}", text, flags=re.M)
    text = re.sub(r"listen \d+;", f"listen 127.0.0.1:{port};", text)
    text = text.replace("/tmp/", f"{workdir}/")
    if access_log is None:
        text = re.sub(r"access_log /dev/stdout[^;]*;", "access_log off;", text)
    else:
        text = re.sub(r"access_log /dev/stdout", f"access_log {access_log}", text)
    return text


def self_signed_certificate(directory):
    """A self-signed P-256 certificate for 127.0.0.1 made with openssl in `directory`: (combined PEM as HAProxy reads
    it, certificate alone, key alone). The key is also written beside the certificate as `<certificate>.key`, the
    layout of a Kubernetes TLS Secret mounted as Deployment/kubernetes/haproxy.yaml does."""
    import os
    import subprocess

    certificate = os.path.join(directory, "certificate.pem")
    key = os.path.join(directory, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", key, "-out", certificate],
        check=True, capture_output=True, timeout=30)
    combined = os.path.join(directory, "combined.pem")
    with open(certificate) as cert_file, open(key) as key_file, open(combined, "w") as out:
        cert_text, key_text = cert_file.read(), key_file.read()
        out.write(cert_text + key_text)
    with open(certificate + ".key", "w") as out:
        out.write(key_text)
    return combined, certificate, key
