# oltplab: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/oltplab/oltplab/internal/cli.Version=$(VERSION)
BIN := bin/oltplab
# make image: where the image goes, its name, its date (the last commit's,
# so that the same commit gives the same digest) and its architecture.
IMAGE_DIR ?= bin/image
IMAGE_TAG ?= oltplab:$(VERSION)
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

.PHONY: build demo test test-short test-all race lint bench bench-placement clean image

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

# Builds the container image without a container daemon: a static oltplab
# (CGO_ENABLED=0: its SQLite is pure Go) on an otherwise empty image, run as
# the non-root user 65532 (internal/ociimage), written as an OCI image layout
# ($(IMAGE_DIR)/oci) and a docker-style tarball ($(IMAGE_DIR)/oltplab.tar) for
# `docker load`, `podman load` or `go tool crane push`. The Dockerfile builds
# the same image with Docker. See docs/kubernetes.md.
image:
	@test -n "$(IMAGE_DIR)" || { echo "IMAGE_DIR is empty: give the directory the image goes into"; exit 2; }
	rm -rf $(IMAGE_DIR)/oci $(IMAGE_DIR)/oltplab.tar $(IMAGE_DIR)/oltplab
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -ldflags "$(LDFLAGS) -s -w" -o $(IMAGE_DIR)/oltplab ./cmd/oltplab
	$(GO) run ./internal/ociimage/mkimage --binary $(IMAGE_DIR)/oltplab --arch $(IMAGE_ARCH) \
		--version $(VERSION) --revision "$(REVISION)" --source https://github.com/oltplab/oltplab \
		--created $(SOURCE_DATE_EPOCH) --tag $(IMAGE_TAG) --oci $(IMAGE_DIR)/oci --tarball $(IMAGE_DIR)/oltplab.tar

# Measures build rate and driver CPU per transaction on private servers
# configured for measurement; prints JSON. As root it then measures the
# load generator beside the database against one farther away
# (bench-placement).
bench: build
	scripts/bench.sh
	@if [[ $$(id -u) == 0 ]]; then $(MAKE) --no-print-directory bench-placement; \
	else echo "bench: not root: bench-placement (network namespaces) not measured" >&2; fi

# The driver beside a managed PostgreSQL against the driver in another
# network namespace that reaches it through a proxy holding every chunk
# 1 ms each way: NOPM, New-Order p90 and the round trip per placement and
# virtual users, as Go benchmark metrics (BenchmarkLoadGeneratorLocalVsRemote,
# internal/cli; root and PostgreSQL 15). A measurement: the suite asserts
# what such a plan must do (TestPlanAcrossNamespaces), not its figures.
bench-placement:
	OLTPLAB_REQUIRE_SERVERS=1 $(GO) test -count=1 -run '^$$' -bench '^BenchmarkLoadGeneratorLocalVsRemote$$' -benchtime 1x -v ./internal/cli

clean:
	rm -rf bin quickstart.db quickstart-report.html
