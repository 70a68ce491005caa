# Entry points people type. Everything a target needs it installs itself (scripts/dev -deps:
# the npm stand-ins into .cache/node, Java via apt when root), so a fresh clone runs `make test`.
#
#   make dev                   local API on :3000 over the AWS stand-ins, with an API key; the studio
#                              at http://127.0.0.1:3000/studio/
#   make build-studio          the studio's build (studio/dist/, embedded by studio/studio.go) when
#                              its sources changed; dev, test and build run it
#   make test [TEST_ARGS=..]   go test on a shared stack started for the run (default -count=1 ./...)
#   make bench                 the benchmarks, on the same kind of stack
#   make build                 every function for Lambda (arm64) into .aws-sam/build-make/<Fn>/
#   make lint                  golangci-lint (.golangci.yml) over the whole module, tests included, both builds
#   make invoke FN=agents EVENT=events/agents-get-agent.json [AGENT_ID=..] [ARGS="-quiet -aws"]
#                              one Lambda invocation of a real bootstrap against a running make dev
#                              (scripts/invoke; -aws: the make build recipe, without the local embedder)

SHELL := /bin/bash
GO ?= go
ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
FUNCTIONS := $(patsubst $(ROOT)/functions/%/main.go,%,$(wildcard $(ROOT)/functions/*/main.go))
# The Lambda recipe: static, no RPC shim, without the local stand-ins AWS never uses (nolocal:
# the local embedding model, see shared/app/kb/nolocal.go), no symbol tables, reproducible paths.
# infra/lambdarun builds the same way (its tests check that the tags agree).
LAMBDA_ENV := CGO_ENABLED=0 GOOS=linux GOARCH=arm64
LAMBDA_FLAGS := -tags lambda.norpc,nolocal -trimpath -ldflags '-s -w'
TEST_ARGS ?= -count=1 ./...
DEV := $(ROOT)/.cache/bin/dev
# golangci-lint, pinned: installed once per version through the module proxy into .cache (a Go
# test that built it would compile a large module on every fresh clone, so it is a target).
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(ROOT)/.cache/golangci-lint/$(GOLANGCI_LINT_VERSION)/golangci-lint

.PHONY: dev test bench build invoke deps fmt vet lint clean dev-bin build-studio

# The studio: npm ci when node_modules is missing or older than the lock (npm writes
# node_modules/.package-lock.json), then the Vite build when a source is newer than the build.
# The build generates the studio's API types from openapi.yaml first, so the document is a source.
STUDIO := $(ROOT)/studio
STUDIO_SRC := $(shell find $(STUDIO)/src -type f 2>/dev/null) $(wildcard $(STUDIO)/index.html $(STUDIO)/package.json \
	$(STUDIO)/package-lock.json $(STUDIO)/tsconfig.json $(STUDIO)/vite.config.* $(STUDIO)/schema/package.json) \
	$(ROOT)/shared/api/openapi/openapi.yaml

build-studio: $(STUDIO)/dist/index.html

$(STUDIO)/dist/index.html: $(STUDIO_SRC) $(STUDIO)/node_modules/.package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed to build the studio (Node.js 20 or later)"; exit 2; }
	cd $(STUDIO) && npm run --silent build
	@touch $@

$(STUDIO)/node_modules/.package-lock.json: $(STUDIO)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed to build the studio (Node.js 20 or later)"; exit 2; }
	cd $(STUDIO) && npm ci --no-audit --no-fund
	@touch $@

# The dev runner is built and exec'd rather than `go run`: it is then make's direct child, so a
# signal to make reaches it and it stops the stand-ins (it also dies with its parent).
# The binaries embed the studio's build, so it comes first.
dev-bin: build-studio
	@mkdir -p $(dir $(DEV))
	@cd $(ROOT) && $(GO) build -o $(DEV) ./scripts/dev

dev: dev-bin
	@cd $(ROOT) && exec $(DEV)

test: dev-bin
	@cd $(ROOT) && exec $(DEV) -test -- $(TEST_ARGS)

bench: dev-bin
	@cd $(ROOT) && exec $(DEV) -test -- -count=1 -run '^$$' -bench . -benchmem ./...

deps: dev-bin
	@cd $(ROOT) && $(GO) mod download && exec $(DEV) -deps

build: build-studio
	@set -e; cd $(ROOT); for d in $(FUNCTIONS); do \
		fn="$$(tr '[:lower:]' '[:upper:]' <<< $${d:0:1})$${d:1}Function"; \
		echo "build $$fn <- functions/$$d"; \
		$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o .aws-sam/build-make/$$fn/bootstrap ./functions/$$d; \
	done

# SAM's makefile build method: `sam build` runs make build-<LogicalId> with ARTIFACTS_DIR set.
# MetaFunction -> functions/meta, and so on for every function.
build-%Function:
	@test -n "$(ARTIFACTS_DIR)" || { echo "ARTIFACTS_DIR is not set (sam build sets it)"; exit 2; }
	cd $(ROOT) && $(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o "$(ARTIFACTS_DIR)/bootstrap" ./functions/$(shell tr '[:upper:]' '[:lower:]' <<< '$*')

invoke:
	@test -n "$(FN)" -a -n "$(EVENT)" || { echo "usage: make invoke FN=<function dir> EVENT=<event file>"; exit 2; }
	@cd $(ROOT) && $(GO) run ./scripts/invoke -fn $(FN) -event $(abspath $(EVENT)) $(ARGS)

fmt:
	cd $(ROOT) && gofmt -l -w .

vet:
	cd $(ROOT) && $(GO) vet ./...

# The whole module (functions/, shared/, infra/, scripts/, studio/; tests included), as the local
# build and as the Lambda build (tag nolocal) see it.
lint:
	@test -x $(GOLANGCI_LINT) || GOBIN=$(dir $(GOLANGCI_LINT)) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	cd $(ROOT) && $(GOLANGCI_LINT) run ./...
	cd $(ROOT) && $(GOLANGCI_LINT) run --build-tags lambda.norpc,nolocal ./...

clean:
	rm -rf $(ROOT)/.aws-sam/build-make $(ROOT)/.cache/bin
