# dshd — build, test, demo and benchmarks. `make test` is what CI runs.
GO       ?= go
BIN      := bin/dshd
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/dshd/dshd/cmd/dshd/internal/version.Version=$(VERSION)
NPM_DIRS := conformance/interop tools/mcp/testdata/npm

.PHONY: all build test test-go test-interop demo bench fuzz lint cross release conformance conformance-agents deps npm image clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/dshd

deps:
	$(GO) mod download
	cd deploy/kubernetes && $(GO) mod download

# npm packages for the interop tests and the MCP server used by the tools tests.
npm:
	@for d in $(NPM_DIRS); do \
		if [ -f $$d/package-lock.json ]; then \
			echo "npm ci in $$d"; (cd $$d && npm ci --no-audit --no-fund --loglevel=error) || exit 1; \
		fi; \
	done

test: deps npm build lint cross test-go test-interop

test-go:
	$(GO) test -race -timeout 20m ./...
	cd deploy/kubernetes && $(GO) test -count=1 ./...

test-interop: build
	cd conformance/interop && npm test

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd deploy/kubernetes && $(GO) vet ./...

# Every release platform (linux, darwin, windows on amd64 and arm64)
# type-checks, tests included, with CGO off as the release builds them.
cross:
	$(GO) run ./internal/release -vet

# The release for the ACP registry, in dist/: an archive per platform
# (static, -trimpath, the version stamped; the same bytes for the same
# commit), SHA256SUMS, agent.json with every archive's URL and checksum,
# and icon.svg. It also sets registry/dshd/agent.json to the version.
# RELEASE_VERSION defaults to that entry's version.
RELEASE_VERSION   ?=
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
release:
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run ./internal/release -out dist $(if $(RELEASE_VERSION),-version $(RELEASE_VERSION))

conformance: build
	$(GO) test -race -count=1 ./conformance/...
	./$(BIN) conformance -- ./$(BIN)

# The suite against third-party agents pinned in conformance/agents (about
# 400 MB from npm, so not part of make test), each on a fake model server on
# loopback; prints one row per agent, details in .conformance-agents/.
conformance-agents: build npm
	cd conformance/agents && npm ci --no-audit --no-fund --loglevel=error
	$(GO) run ./conformance/agents -dshd ./$(BIN) -out .conformance-agents -markdown

demo: build
	$(GO) run ./conformance/demo -dshd ./$(BIN)

bench: build npm
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1s ./... 2>/dev/null | grep -E '^(Benchmark|ok|PASS|FAIL)' || true
	$(GO) run ./conformance/bench -dshd ./$(BIN)

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzStreamRead$$' -fuzztime 30s ./acp/rpc
	$(GO) test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime 30s ./prompt
	$(GO) test -run '^$$' -fuzz '^FuzzJournalLoad$$' -fuzztime 30s ./agent/session

# The container image (needs a Docker engine; not part of make test).
image:
	docker build --build-arg VERSION=$(VERSION) -t dshd:$(VERSION) .

clean:
	rm -rf bin dist
