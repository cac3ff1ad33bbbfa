# pltlab container image: Debian bookworm-slim, Debian's chromium, pltlab built from source, run
# as a non-root user. `make image` builds it with podman from locally made base images (no
# registry needed; README, "Running on a cluster"); with a registry, `podman build .` or
# `docker build .` pull the two FROM images instead.
#
# Shaped links need root in the container today: podman run --user 0 --cap-add
# NET_ADMIN,SYS_ADMIN --device /dev/net/tun --security-opt unmask=/proc/sys (the link writes
# sysctls in its namespace); the Job from `pltlab k8s` states the same. `--link none` runs as the
# image's user (with a --tcp-cc that net.ipv4.tcp_allowed_congestion_control allows).
ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm
ARG BASE_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${GO_IMAGE} AS build
# GOPROXY=off with the host's module cache mounted at /go/pkg/mod builds offline (make image).
ARG GOPROXY=https://proxy.golang.org,direct
ARG VERSION=dev
ENV GOPROXY=${GOPROXY} GOFLAGS=-modcacherw CGO_ENABLED=0
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -ldflags "-X main.version=${VERSION}" -o /out/pltlab ./cmd/pltlab

FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      chromium ca-certificates fonts-liberation iproute2 iputils-ping \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 10001 --user-group pltlab
COPY --from=build /out/pltlab /usr/local/bin/pltlab
USER pltlab
WORKDIR /home/pltlab
ENTRYPOINT ["pltlab"]
CMD ["--help"]
