# oltplab's container image, for Docker users (untested by oltplab's own
# tests and CI, which have no Docker: `make image` builds the same image
# without a daemon, and a test runs it; see docs/kubernetes.md).
#
#   docker build -t oltplab:$(git describe --always --dirty) \
#       --build-arg VERSION=$(git describe --always --dirty) --build-arg REVISION=$(git rev-parse HEAD) .
#
# A static oltplab (CGO_ENABLED=0: its SQLite driver, modernc.org/sqlite,
# is pure Go) on distroless' static image (CA certificates, tzdata,
# /etc/passwd), run as its non-root user 65532, the user
# `oltplab k8s manifest` runs its pods as.

ARG GO_VERSION=1.26.8

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=false \
        -ldflags "-s -w -X github.com/oltplab/oltplab/internal/cli.Version=${VERSION}" \
        -o /out/oltplab ./cmd/oltplab

FROM gcr.io/distroless/static:nonroot
ARG VERSION=dev
ARG REVISION=
LABEL org.opencontainers.image.title=oltplab \
      org.opencontainers.image.version=$VERSION \
      org.opencontainers.image.revision=$REVISION \
      org.opencontainers.image.source=https://github.com/oltplab/oltplab
COPY --from=build /out/oltplab /usr/local/bin/oltplab
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/usr/local/bin/oltplab"]
