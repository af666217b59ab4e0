"""An authoritative DNS server for the deployment checks: what kube-dns (CoreDNS) answers for a headless Service, on
127.0.0.1 and a free UDP port, built on dnslib (PyPI).

For a headless Service `NAME.NAMESPACE.svc.cluster.local` with a port named `http` over TCP, Kubernetes serves one SRV
record per endpoint under `_http._tcp.NAME.NAMESPACE.svc.cluster.local`: priority 0, equal weights, the endpoint's port
and a target name of its own under the Service's name, with the target's A record in the answer's additional section.
This server answers the same for the endpoints the check sets (`set_endpoints`, changeable while it runs), each a
target label and a port on 127.0.0.1; `additional=False` on an endpoint leaves its A record out of the SRV answer, so
a client must ask for the target's address itself (CoreDNS always includes it; other DNS servers may not). It also
answers A queries for the current targets (127.0.0.1), NODATA for their other types, and NXDOMAIN for every other
name. It counts every query by (name, type), so a check can tell what its client asked."""

import collections
import threading

from dnslib import QTYPE, RCODE, RR, SOA, SRV, A
from dnslib.server import BaseResolver, DNSLogger, DNSServer

TTL = 5  # CoreDNS's kubernetes plugin default


class _Resolver(BaseResolver):
    def __init__(self, owner):
        self.owner = owner

    def resolve(self, request, handler):
        return self.owner.answer(request)


class ServiceDNS:
    """Serves the SRV records of `service` (the headless Service's name, e.g.
    feedback-host.feedbackhost.svc.cluster.local) for the named `port_name` (e.g. http) over TCP."""

    def __init__(self, service, port_name):
        self.service = service.lower().rstrip(".")
        self.srv_name = f"_{port_name}._tcp.{self.service}"
        self.lock = threading.Lock()
        self.endpoints = []
        self.queries = collections.Counter()
        self.server = DNSServer(_Resolver(self), address="127.0.0.1", port=0,
                                logger=DNSLogger(log="-recv,-send,-request,-reply,-truncated,-error,-data"))
        self.port = self.server.server.server_address[1]
        self.server.start_thread()

    def target(self, label):
        """The full target name of an endpoint labelled `label` (as CoreDNS names a pod under its Service)."""
        return f"{label}.{self.service}"

    def set_endpoints(self, endpoints):
        """The answer from now on: [(target label, port, additional)] in this order."""
        with self.lock:
            self.endpoints = [(self.target(label), port, additional) for label, port, additional in endpoints]

    def asked(self, name, qtype):
        """How many queries for `name` of type `qtype` ("SRV", "A", ...) arrived so far."""
        with self.lock:
            return self.queries[(name.lower().rstrip("."), qtype)]

    def answer(self, request):
        question = request.q
        name = str(question.qname).lower().rstrip(".")
        qtype = QTYPE[question.qtype]
        reply = request.reply()
        reply.header.ra = 0  # authoritative, not a recursive resolver
        with self.lock:
            self.queries[(name, qtype)] += 1
            endpoints = list(self.endpoints)
        targets = {target for target, _, _ in endpoints}
        weight = 100 // max(len(endpoints), 1)  # CoreDNS's: 100 shared equally
        if name == self.srv_name and endpoints:
            if qtype in ("SRV", "ANY"):
                for target, port, additional in endpoints:
                    reply.add_answer(RR(self.srv_name, QTYPE.SRV, ttl=TTL,
                                        rdata=SRV(priority=0, weight=weight, port=port, target=target)))
                    if additional:
                        reply.add_ar(RR(target, QTYPE.A, ttl=TTL, rdata=A("127.0.0.1")))
            else:
                self._no_data(reply)
        elif name in targets:
            if qtype in ("A", "ANY"):
                reply.add_answer(RR(name, QTYPE.A, ttl=TTL, rdata=A("127.0.0.1")))
            else:
                self._no_data(reply)
        else:
            reply.header.rcode = RCODE.NXDOMAIN
            self._no_data(reply)
        return reply

    def _no_data(self, reply):
        reply.add_auth(RR("cluster.local", QTYPE.SOA, ttl=TTL,
                          rdata=SOA("ns.dns.cluster.local", "hostmaster.cluster.local", (1, 7200, 1800, 86400, TTL))))

    def stop(self):
        self.server.stop()
        self.server.server.server_close()
        self.server.thread.join(timeout=5)
