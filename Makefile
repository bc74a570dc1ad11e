# Model Fleet: the front door. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

CLUSTER := acceptance-tests/cluster/scripts
export GOTOOLCHAIN := local
# Build caches live outside the clone so fresh clones and CI reuse them.
export MODEL_FLEET_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/model-fleet
export CARGO_TARGET_DIR ?= $(MODEL_FLEET_CACHE)/target
# Control plane instance used by cluster-* targets (make test uses its own, `test`).
INSTANCE ?= dev
TEST_INSTANCE ?= test

.PHONY: help demo demo-down bootstrap cluster-up cluster-down cluster-status test test-unit lint fmt provider-install

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

demo: ## The main job: terraform apply of examples/terraform/quickstart on a local control plane
	@$(CLUSTER)/demo.sh up

demo-down: ## terraform destroy the demo, stop its operator and its control plane
	@$(CLUSTER)/demo.sh down

bootstrap: ## Build/fetch everything a fresh machine needs (idempotent; first run about 22 min on 2 cores)
	@$(CLUSTER)/bootstrap.sh

cluster-up: ## Start control plane INSTANCE (default dev) with simulated nodes; prints its kubeconfig
	@$(CLUSTER)/cluster.sh up $(INSTANCE)

cluster-down: ## Stop control plane INSTANCE and remove its data
	@$(CLUSTER)/cluster.sh down $(INSTANCE)

cluster-status: ## Show the components of control plane INSTANCE (cluster.sh status exits 3 when it is not running)
	@$(CLUSTER)/cluster.sh status $(INSTANCE) || true

test: ## Unit and control-plane tests (starts and stops its own instance, never the demo's)
	@$(CLUSTER)/test.sh $(TEST_INSTANCE)

test-unit: ## Unit tests only (no control plane)
	cargo test --workspace --lib --bins

provider-install: ## Release archive + filesystem mirror of the provider (.local/terraform-mirror)
	@provider/scripts/install.sh

lint: ## rustfmt check and clippy with warnings denied
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

fmt: ## Format the Rust code
	cargo fmt --all
