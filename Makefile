# The two commands: `make run` and `make test` (see README.md). `make down` stops everything.
SHELL := /bin/bash
.DEFAULT_GOAL := help

INFRA_ENV := .run/infra.env
# Where the conformance scenarios live: the shared folder beside the repository.
CONFORMANCE := $(wildcard ../shared/conformance/examples/*.json)

.PHONY: help run test down infra infra-down services services-down lint proto conformance

help:
	@echo "make run    infrastructure up, build and start all four services, wait until SERVING"
	@echo "make test   infrastructure up, fmt, clippy, buf lint + breaking, cargo test, conformance"
	@echo "make down   stop the services and the infrastructure"

run: infra services

test: infra lint proto
	set -a && source $(INFRA_ENV) && set +a && OKEY_TEST_REQUIRE_INFRA=1 cargo test --workspace
	$(MAKE) --no-print-directory conformance

down: services-down infra-down

infra:
	deploy/infra.sh up

infra-down:
	deploy/infra.sh down

services:
	deploy/services.sh up

services-down:
	deploy/services.sh down

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings

proto:
	deploy/proto-check.sh

# The shared conformance examples through the real engine, once okeyctl has the subcommand.
conformance:
	@cargo build --quiet -p okeyctl
	@bin="$$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/okeyctl"; \
	if [ -z "$(CONFORMANCE)" ]; then echo "conformance: no scenarios found in ../shared/conformance/examples"; \
	elif "$$bin" conformance check --help >/dev/null 2>&1; then "$$bin" conformance check $(CONFORMANCE); \
	else echo "conformance: okeyctl has no 'conformance check' yet; skipped"; fi
