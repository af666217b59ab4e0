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


def render_haproxy(text, frontend_port, stats_port, replica_ports):
    """The same configuration bound to 127.0.0.1: one port per `server` line, in order, and no DNS resolution."""
    servers = re.findall(r"^(\s*server\s+\S+\s+)\S+", text, flags=re.M)
    if len(servers) != len(replica_ports):
        raise ValueError(f"the configuration has {len(servers)} servers, the run has {len(replica_ports)} replicas")
    ports = iter(replica_ports)
    text = re.sub(r"^(\s*server\s+\S+\s+)\S+", lambda m: f"{m.group(1)}127.0.0.1:{next(ports)}", text, flags=re.M)
    # Loopback addresses need no resolver; the rest of `default-server` (checks, intervals) stays as shipped.
    text = re.sub(r" resolvers \S+", "", text)
    text = re.sub(r" init-addr \S+", "", text)
    text = re.sub(r"^resolvers .*?(?=^\S)", "", text, flags=re.M | re.S)
    binds = {"feedback_host": frontend_port, "stats": stats_port}
    rendered, current = [], None
    for line in text.splitlines():
        if line and not line.startswith((" ", "\t")):
            current = line.split()[-1] if line.startswith("frontend") else None
        if current in binds and line.strip().startswith("bind "):
            line = re.sub(r"bind \S+", f"bind 127.0.0.1:{binds[current]}", line)
        rendered.append(line)
    return "\n".join(rendered) + "\n"


def render_nginx(text, port, replica_ports, workdir):
    """The same nginx configuration on 127.0.0.1 with one port per upstream `server`, its files under `workdir`."""
    upstream_server = r"^(\s*server\s+)[\w.-]+:\d+"
    servers = re.findall(upstream_server, text, flags=re.M)
    if len(servers) != len(replica_ports):
        raise ValueError(f"the configuration has {len(servers)} servers, the run has {len(replica_ports)} replicas")
    ports = iter(replica_ports)
    text = re.sub(upstream_server, lambda m: f"{m.group(1)}127.0.0.1:{next(ports)}", text, flags=re.M)
    text = re.sub(r"listen \d+;", f"listen 127.0.0.1:{port};", text)
    text = text.replace("/tmp/", f"{workdir}/")
    text = re.sub(r"access_log /dev/stdout[^;]*;", "access_log off;", text)
    return text
