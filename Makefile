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
# Control plane instance of make drills (started and stopped by it).
DRILLS_INSTANCE ?= drills

.PHONY: validation-bootstrap validation-check image-check help demo demo-down bootstrap cluster-up cluster-down cluster-status test examples-check test-unit bench-pure lint fmt provider-install image image-push kind-up kind-status kind-down infra-check docs-bootstrap docs-build docs-generate bench bench-smoke bench-provider bench-operator drills drills-ci drills-full
INFRA := acceptance-tests/infra/scripts

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

demo: ## The main job: terraform apply of examples/terraform/quickstart on a local control plane
	@$(CLUSTER)/demo.sh up

demo-down: ## terraform destroy the demo, stop its operator and its control plane
	@$(CLUSTER)/demo.sh down

bootstrap: ## Build/fetch everything a fresh machine needs, the real node's parts included (idempotent; first run about 27 min on 2 cores)
	@$(CLUSTER)/bootstrap.sh

cluster-up: ## Start control plane INSTANCE (default dev) with simulated nodes; prints its kubeconfig
	@$(CLUSTER)/cluster.sh up $(INSTANCE)

cluster-down: ## Stop control plane INSTANCE and remove its data
	@$(CLUSTER)/cluster.sh down $(INSTANCE)

cluster-status: ## Show the components of control plane INSTANCE (cluster.sh status exits 3 when it is not running)
	@$(CLUSTER)/cluster.sh status $(INSTANCE) || true

test: ## Unit and control-plane tests (starts and stops its own instance, never the demo's)
	@$(CLUSTER)/test.sh $(TEST_INSTANCE)

examples-check: ## Every example renders (render -f); the catalog's manifests reach their state and its Terraform examples plan clean, on a private instance
	@$(CLUSTER)/examples-check.sh

drills: ## Operator fault drills of issue 18 on their own instance (kill -9, API server/etcd restart, stalled connection, two replicas, load; about 8 min plus the build); figures in docs/RELIABILITY.md
	@$(CLUSTER)/drills.sh $(DRILLS_INSTANCE)

drills-ci: ## The bounded drill subset CI runs (kill -9, a 15 s stalled connection, two replicas; bursts of 150) on instance drills-ci
	@DRILL_BURST=150 DRILL_STALL_SECONDS=15 $(CLUSTER)/drills.sh drills-ci drill_kill9 drill_stall two_replicas

drills-full: ## make drills at the issue's full load size (1000 InferenceServices, 300 TrainingRuns)
	@DRILL_LOAD_SERVICES=1000 DRILL_LOAD_RUNS=300 $(CLUSTER)/drills.sh $(DRILLS_INSTANCE)

test-unit: ## Unit tests only (no control plane)
	cargo test --workspace --lib --bins

bench-pure: ## Criterion benchmarks of the pure code (render, fit budget, route claims, validation, provider codecs) with allocations per call; BENCH_ARGS go to criterion
	cargo bench -p model-fleet-api -p terraform-provider-modelfleet --bench pure --bench codec $(if $(BENCH_ARGS),-- $(BENCH_ARGS))

provider-install: ## Release archive + filesystem mirror of the provider (.local/terraform-mirror)
	@provider/scripts/install.sh

image: ## Operator OCI image(s), static binary, crane, no container engine (.local/images; amd64, arm64 where its Rust target is installed)
	@images/operator.sh build

image-push: ## Push the images of make image and their index: make image-push REGISTRY=ghcr.io/your-org
	@images/operator.sh push "$(REGISTRY)"

validation-bootstrap: ## llama-cpp-python's OpenAI server built from PyPI into a venv under $MODEL_FLEET_CACHE, for validation-check (idempotent; first run builds llama.cpp)
	@examples/validation/scripts/bootstrap.sh >/dev/null

validation-check: ## model-fleet-check unit tests, then its OpenAI check end to end: passes on llama-cpp-python's server (tiny random GGUF), fails on a schema-breaking proxy
	cargo test -p model-fleet-check --lib
	cargo test -p model-fleet-check --test openai_conformance -- --nocapture

image-check: ## The validation check image (model-fleet-check, static, crane) into .local/images
	@images/check.sh build

lint: ## rustfmt check, clippy with warnings denied, code size limits (files <= 500 lines, functions <= 80), the bench scripts' unit tests (report, profile folding)
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	python3 acceptance-tests/scripts/code-size.py
	python3 -B -m unittest discover -s acceptance-tests/bench

fmt: ## Format the Rust code
	cargo fmt --all

kind-up: ## kind cluster with Cilium, Gateway API, KEDA, Model Fleet (needs Docker/Podman/nerdctl; without one: make demo)
	@$(INFRA)/kind.sh up

kind-status: ## Show the kind cluster of make kind-up
	@$(INFRA)/kind.sh status

kind-down: ## terraform destroy the kind cluster of make kind-up
	@$(INFRA)/kind.sh down

infra-check: ## terraform fmt -check, validate (real providers) and tflint on terraform/ and modules/
	@$(INFRA)/check.sh

docs-bootstrap: ## Python venv with the pinned Sphinx toolchain (docs/requirements.txt) and mermaid, under $MODEL_FLEET_CACHE (idempotent)
	@docs/scripts/docs.sh bootstrap

docs-build: ## The documentation site into docs/_build/html (warnings are errors) and its internal link check
	@docs/scripts/docs.sh build

docs-generate: ## Rewrite the generated reference pages (CRDs, Terraform resources, CLI, the invalid-input table) from the code
	UPDATE_DOCS=1 cargo test -p model-fleet-api --test reference_docs
	UPDATE_DOCS=1 cargo test -p terraform-provider-modelfleet --lib registry_docs
	UPDATE_DOCS=1 cargo test -p terraform-provider-modelfleet --test invalid_corpus
	UPDATE_DOCS=1 cargo test -p model-fleet-operator --bin model-fleet-operator cli_reference

bench: ## Benchmarks of issue 17 (long: about an hour): provider vs terraform_data and kubernetes_manifest, operator vs a plain client; ratios and targets (docs/PERFORMANCE.md)
	@acceptance-tests/bench/bench.sh all

bench-smoke: ## The bounded bench CI runs: every step of make bench at N=10 (provider) and N=20 (operator); ratios printed, no timing asserted
	@BENCH_PROVIDER_N=10 BENCH_OPERATOR_N=20 acceptance-tests/bench/bench.sh all

bench-provider: ## Only the provider benchmark (BENCH_PROVIDER_N="100 500 1000")
	@acceptance-tests/bench/bench.sh provider

bench-operator: ## Only the operator benchmark (BENCH_OPERATOR_N=100,300,1000,3000)
	@acceptance-tests/bench/bench.sh operator
