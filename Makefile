# FeedbackHost: the README's commands. Each target installs what it needs when it is missing.
SHELL := /bin/bash
.DEFAULT_GOAL := help

HOST ?= 127.0.0.1
PORT ?= 8080
DEBIAN_PACKAGES := libcurl4-openssl-dev zlib1g-dev libsqlite3-dev pkg-config curl python3 wrk haproxy nginx openssl
# The PostgreSQL journal: libpq to build against, and the server the tests start privately (initdb, pg_ctl).
DEBIAN_PACKAGES += libpq-dev postgresql
PYPI_PACKAGES := openapi-spec-validator pyyaml
# The published schemas checked by a validator that is not ours (SystemSchemaTests, FixtureExportTests).
PYPI_PACKAGES += jsonschema
# The OpenAPI document against the running server (Tests/Schemathesis): schemathesis from PyPI, this version.
SCHEMATHESIS_VERSION := 4.32.5
PYPI_PACKAGES += schemathesis==$(SCHEMATHESIS_VERSION)
# The manual clock's Python example (Tests/ClockExamples, docs/API.md "A clock tests move"): pytest from PyPI.
PYPI_PACKAGES += pytest
# The browser test (Tests/Browser): headless Chromium and chromedriver from Debian, selenium from PyPI.
DEBIAN_PACKAGES += chromium chromium-driver
PYPI_PACKAGES += selenium
# The Kubernetes balancer's check (Deployment/checks/kubernetes_dns_test.py): its DNS server is built on dnslib.
PYPI_PACKAGES += dnslib
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_TEST_FLAGS ?=

.PHONY: help deps build run test lint format openapi bench fuzz clean container-check cluster-test deployment-test

help:
	@echo "make run    build and start the server on $(HOST):$(PORT)"
	@echo "make test   check formatting, build, run every test"
	@echo "make openapi  write openapi.yaml's schemas of the systems from what the server publishes"
	@echo "make bench  run the benchmarks (Benchmarks/ package, release builds)"
	@echo "make fuzz   run the HTTP parser fuzzer for FUZZ_SECONDS (default 60)"
	@echo "make container-check  run the release binary in a debootstrapped copy of the Dockerfile's runtime stage"
	@echo "make cluster-test     three replicas behind HAProxy with Deployment/haproxy/haproxy.cfg (and the Kubernetes one through DNS)"

# Installs the Debian and PyPI packages the build and the tests need, only when one is missing.
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@python3 -c "import openapi_spec_validator, yaml, schemathesis, jsonschema; \
		assert schemathesis.__version__ == '$(SCHEMATHESIS_VERSION)'" 2>/dev/null || \
		python3 -m pip install -q $(PYPI_PACKAGES) || \
		python3 -m pip install -q --break-system-packages $(PYPI_PACKAGES)
	@python3 -c "import selenium" 2>/dev/null || python3 -m pip install -q selenium || \
		python3 -m pip install -q --break-system-packages selenium
	@python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q pytest || \
		python3 -m pip install -q --break-system-packages pytest
	@python3 -c "import dnslib" 2>/dev/null || python3 -m pip install -q dnslib || \
		python3 -m pip install -q --break-system-packages dnslib

build: deps
	swift build

run: deps
	swift build -c release --product feedback-host
	.build/release/feedback-host --host $(HOST) --port $(PORT)

WEB_FILES := Sources/FeedbackService/Web/Files

lint:
	@# Issue 30: no module of Sources/ over 6,000 lines of Swift (MODULE_LINE_LIMIT=N checks another limit).
	@scripts/check-module-sizes.sh
	swift format lint --strict -r Package.swift Plugins Sources Tests Fuzz/ParserFuzzer.swift Examples/PollHost/Package.swift \
		Examples/PollHost/Sources Examples/PollHost/Tests
	@# The web page's scripts are real files: a syntax error fails here, not in a browser.
	@if command -v node >/dev/null; then for f in $(WEB_FILES)/*.js; do node --check "$$f" || exit 1; done; \
		else echo "lint: node not found, web scripts not syntax-checked (the browser test still runs them)"; fi

format:
	swift format format -i -r Package.swift Plugins Sources Tests Fuzz/ParserFuzzer.swift Examples/PollHost/Package.swift \
		Examples/PollHost/Sources Examples/PollHost/Tests

test: deps lint
	swift build --build-tests
	# One test at a time: some tests count the process's file descriptors or rely on free cooperative threads,
	# and other suites running beside them on 2 cores would disturb that. The whole run takes under a minute.
	swift test --skip-build --no-parallel $(SWIFT_TEST_FLAGS)
	# A host of one's own (Examples/PollHost, docs/SYSTEMS.md): a package that uses FeedbackHost's products only,
	# with a system written with the macros. Built and tested here so the API a host needs cannot break unnoticed.
	swift build --package-path Examples/PollHost --build-tests
	swift test --package-path Examples/PollHost --skip-build --no-parallel
	# The manual clock's pytest example against the server (docs/API.md, "A clock tests move").
	SERVER_BINARY="$$(swift build --show-bin-path)/feedback-host" python3 -m pytest -q -p no:cacheprovider \
		Tests/ClockExamples
	# A misbehaving system harms only its own sessions: a host with a runaway feedback, a slow reducer, a storm and a
	# trap beside 60 posted and streamed counters, then the trap's restart and quarantine (about a minute).
	HOSTILE_BINARY="$$(swift build --show-bin-path)/hostile-host" python3 -m pytest -q -s -p no:cacheprovider \
		Tests/Containment
	# The deployment files against the Dockerfile and the server; three replicas behind HAProxy and nginx.
	SERVER_BINARY="$$(swift build --show-bin-path)/feedback-host" python3 Deployment/checks/test_deployment.py
	python3 Deployment/checks/cluster_test.py --binary "$$(swift build --show-bin-path)/feedback-host"
	# One page, 12 streams over HTTP/2 through HAProxy's TLS frontend (headless Chromium, self-signed certificate).
	python3 Deployment/checks/h2_browser_test.py --binary "$$(swift build --show-bin-path)/feedback-host"
	# Sessions outlive their replica: PostgreSQL, replicas with --journal-url behind HAProxy, SIGKILL, a replica
	# joining, SIGTERM, SIGSTOP past the lease, with posters and streams throughout (about a minute).
	python3 Deployment/checks/cluster_fault_test.py --binary "$$(swift build --show-bin-path)/feedback-host"
	# The Kubernetes HAProxy (the ConfigMap's haproxy.cfg) finding replicas through SRV records served by a DNS server
	# of the test's own on 127.0.0.1: a replica leaving the answer, one joining (about 40 s, most of it hold obsolete).
	python3 Deployment/checks/kubernetes_dns_test.py --binary "$$(swift build --show-bin-path)/feedback-host"
	# openapi.yaml against the server: its systems' schemas are what they publish (else: make openapi), then
	# schemathesis for 90 s, fixed seed; any finding fails (Tests/Schemathesis).
	python3 Tests/Schemathesis/run.py --binary "$$(swift build --show-bin-path)/feedback-host"

# openapi.yaml's schemas of the built-in systems (states, client events), written from what the server publishes
# (GET /v1/systems/{name}); make test fails while they differ (Tests/Schemathesis/openapi_systems.py).
openapi: deps
	swift build --product feedback-host
	python3 Tests/Schemathesis/openapi_systems.py --write --binary "$$(swift build --show-bin-path)/feedback-host"

bench: deps
	$(MAKE) -C Benchmarks bench

FUZZ_SECONDS ?= 60
fuzz: deps
	$(MAKE) -C Fuzz run SECONDS=$(FUZZ_SECONDS)

clean:
	rm -rf .build Benchmarks/.build Examples/PollHost/.build

# The Dockerfile's runtime stage without a Docker engine: a debootstrapped Debian 12 minbase root (cached under
# .build/container-root, keyed by the package list read from the Dockerfile) runs the release binary as the image's
# user. Downloads about 230 MB the first time, so it is not part of `make test`. Needs root.
container-check: deps
	@command -v debootstrap >/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq debootstrap; }
	swift build -c release --static-swift-stdlib -Xswiftc -DFEEDBACKHOST_NO_MANUAL_CLOCK --product feedback-host
	$(SUDO) python3 Deployment/checks/container_check.py --dockerfile Dockerfile \
		--binary "$$(swift build -c release --static-swift-stdlib -Xswiftc -DFEEDBACKHOST_NO_MANUAL_CLOCK --show-bin-path)/feedback-host" --cache .build/container-root

# Three replicas on loopback behind HAProxy (and then nginx) started from the shipped Deployment/haproxy/haproxy.cfg
# and Deployment/nginx/nginx.conf, ports filled in. Part of `make test`.
cluster-test: deps
	swift build --product feedback-host
	python3 Deployment/checks/cluster_test.py --binary "$$(swift build --show-bin-path)/feedback-host"
	python3 Deployment/checks/h2_browser_test.py --binary "$$(swift build --show-bin-path)/feedback-host"
	python3 Deployment/checks/cluster_fault_test.py --binary "$$(swift build --show-bin-path)/feedback-host"
	python3 Deployment/checks/kubernetes_dns_test.py --binary "$$(swift build --show-bin-path)/feedback-host"

# The manifests, compose file and proxy configurations name the image, port and probes the Dockerfile and server use.
deployment-test: deps
	swift build --product feedback-host
	SERVER_BINARY="$$(swift build --show-bin-path)/feedback-host" python3 Deployment/checks/test_deployment.py
