# The two commands: `make run` and `make test` (see README.md). `make down` stops everything.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# The run directory deploy/lib.sh uses (OKEY_RUN_DIR moves it), and the port `make traces`
# receives OTLP on (OKEY_OTLP_PORT moves it).
INFRA_ENV := $(or $(OKEY_RUN_DIR),.run)/infra.env
OTLP_PORT := $(or $(OKEY_OTLP_PORT),4317)
# The shared conformance examples, in the shared folder beside the repository.
CONFORMANCE := $(wildcard ../shared/conformance/examples/*.json)

.PHONY: help run test down infra infra-down browser services services-down demo traces lint proto chart conformance conformance-check

help:
	@echo "make run    infrastructure up, build and start all four services, wait until SERVING, play a demo match"
	@echo "make test   infrastructure up, fmt, clippy, buf lint + breaking, the Helm chart check, cargo test, conformance"
	@echo "make down   stop the services and the infrastructure"
	@echo "make traces print every trace sent to OTLP 127.0.0.1:$(OTLP_PORT) as a tree (OKEY_OTLP_PORT moves it; README: finding a move's trace)"

run: infra services demo

test: infra browser lint proto chart
	set -a && source $(INFRA_ENV) && set +a && OKEY_TEST_REQUIRE_INFRA=1 cargo test --workspace
	$(MAKE) --no-print-directory conformance-check

down: services-down infra-down

infra:
	deploy/infra.sh up

infra-down:
	deploy/infra.sh down

# The browser the replay page is tested in (installed with apt when missing).
browser:
	@source deploy/lib.sh && ensure_browser

services:
	deploy/services.sh up

services-down:
	deploy/services.sh down

# A demo match on the running services: a guest finds a table with bots through matchmaking and
# plays it, told hand by hand (needs `infra services`).
demo:
	deploy/demo.sh

# A trace printer for local runs: receives OTLP/gRPC on 127.0.0.1:$(OTLP_PORT) and prints each
# trace as a tree (start the services with OKEY_TELEMETRY__OTLP_ENDPOINT=http://127.0.0.1:$(OTLP_PORT)).
traces:
	@cargo run -q -p traces --bin otlp-print -- 127.0.0.1:$(OTLP_PORT)

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings

proto:
	deploy/proto-check.sh

# The Helm chart, offline: lint --strict, render, kubernetes-validate --strict, assertions.
chart:
	deploy/chart-check.sh

# Every conformance scenario (the project's own and the shared examples) through the real engine.
SCENARIOS := $(wildcard tests/conformance/*.json)
# `make test` checks with the okeyctl that `cargo test --workspace` has just built: a second
# `cargo build -p okeyctl` resolves other features and compiles the dependencies all over again.
conformance:
	@cargo build --quiet -p okeyctl
	@$(MAKE) --no-print-directory conformance-check

conformance-check:
	@bin="$$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/okeyctl"; \
	if [ -z "$(CONFORMANCE)" ]; then echo "conformance: the shared examples (../shared/conformance/examples) are not beside this checkout; checking the project's own"; fi; \
	"$$bin" conformance check $(SCENARIOS) $(CONFORMANCE)
