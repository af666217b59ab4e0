# FeedbackHost: the README's commands. Each target installs what it needs when it is missing.
SHELL := /bin/bash
.DEFAULT_GOAL := help

HOST ?= 127.0.0.1
PORT ?= 8080
DEBIAN_PACKAGES := libcurl4-openssl-dev zlib1g-dev libsqlite3-dev pkg-config curl python3 wrk
PYPI_PACKAGES := openapi-spec-validator pyyaml
# The browser test (Tests/Browser): headless Chromium and chromedriver from Debian, selenium from PyPI.
DEBIAN_PACKAGES += chromium chromium-driver
PYPI_PACKAGES += selenium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_TEST_FLAGS ?=

.PHONY: help deps build run test lint format bench fuzz clean

help:
	@echo "make run    build and start the server on $(HOST):$(PORT)"
	@echo "make test   check formatting, build, run every test"
	@echo "make bench  run the benchmarks (Benchmarks/ package, release builds)"
	@echo "make fuzz   run the HTTP parser fuzzer for FUZZ_SECONDS (default 60)"

# Installs the Debian and PyPI packages the build and the tests need, only when one is missing.
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@python3 -c "import openapi_spec_validator, yaml" 2>/dev/null || \
		python3 -m pip install -q $(PYPI_PACKAGES) || \
		python3 -m pip install -q --break-system-packages $(PYPI_PACKAGES)
	@python3 -c "import selenium" 2>/dev/null || python3 -m pip install -q selenium || \
		python3 -m pip install -q --break-system-packages selenium

build: deps
	swift build

run: deps
	swift build -c release --product feedback-host
	.build/release/feedback-host --host $(HOST) --port $(PORT)

lint:
	swift format lint --strict -r Package.swift Sources Tests Fuzz/ParserFuzzer.swift

format:
	swift format format -i -r Package.swift Sources Tests Fuzz/ParserFuzzer.swift

test: deps lint
	swift build --build-tests
	# One test at a time: some tests count the process's file descriptors or rely on free cooperative threads,
	# and other suites running beside them on 2 cores would disturb that. The whole run takes under a minute.
	swift test --skip-build --no-parallel $(SWIFT_TEST_FLAGS)

bench: deps
	$(MAKE) -C Benchmarks bench

FUZZ_SECONDS ?= 60
fuzz: deps
	$(MAKE) -C Fuzz run SECONDS=$(FUZZ_SECONDS)

clean:
	rm -rf .build Benchmarks/.build
