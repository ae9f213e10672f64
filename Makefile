# oltplab: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/oltplab/oltplab/internal/cli.Version=$(VERSION)
BIN := bin/oltplab

.PHONY: build demo test test-short test-all race lint bench clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/oltplab

# Builds the binary and runs the quickstart on embedded SQLite: no server needed.
demo: build
	./$(BIN) quickstart

# Installs what the tests need (PostgreSQL 15, MariaDB, Chromium, fio from
# Debian packages, when missing and running as root), starts private servers on
# loopback in a temporary directory (and Babelfish for PostgreSQL, for the SQL
# Server dialect, from ../shared/babelfish or OLTPLAB_BABELFISH_TARBALL), runs
# every test, stops the servers. Lint and the fast path run first and fail fast
# (CI's lint stage, .ci/run).
test: lint test-short test-all

# Every test against the private servers, without lint and the fast path: a
# test whose server, program or root is missing fails instead of skipping.
test-all:
	OLTPLAB_REQUIRE_SERVERS=1 scripts/testservers.sh run $(GO) test -count=1 -timeout 25m ./...

# The whole suite under the race detector: several times slower than
# make test, so not part of it (nor of CI); run it before merging changes
# to anything concurrent (driver, sampler, load, dialect sessions).
race: lint
	OLTPLAB_REQUIRE_SERVERS=1 scripts/testservers.sh run $(GO) test -race -count=1 -timeout 60m ./...

# The fast path: every test that needs no server, no process of its own
# and no TPC-C database (internal/testenv decides): under a minute of CPU,
# most of it building the test binaries. No root, no packages, no servers.
test-short:
	$(GO) test -short -count=1 ./...

lint:
	@out=$$(gofmt -l cmd internal); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 -run '^TestLayering$$' ./internal/
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }

# Measures build rate and driver CPU per transaction on private servers
# configured for measurement; prints JSON.
bench: build
	scripts/bench.sh

clean:
	rm -rf bin quickstart.db quickstart-report.html
