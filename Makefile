# pltlab: two commands do all set-up: `make setup` and `make test`.
GO      ?= go
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
GOFILES  = $(shell find . -name '*.go' -not -path './bin/*')
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Integration tests (real server, emulator and Chromium) are named TestIntegration*; unit tests
# run with -short, which skips them, and with the race detector in the packages where goroutines
# share state (RACE_PKGS: the emulator and its link check, the servers, the spinners, flows,
# browser, view's live updates, the runner): the other packages (statistics, plans, the cluster
# scripts, the command's flag wiring) build without it, so a fresh clone does not compile
# k8s.io/api and the whole command a second time for the race detector, and the integration
# phase reuses their test binaries.
INTEGRATION_TIMEOUT ?= 14m
RACE_PKGS := /(shaping|server|internal/idlepoll|flows|browser|view|pages|experiment|device|artifacts|result)(/|$$)
# STUDY_TESTS are the whole-study integration tests (every study's smoke scale through
# `reproduce`, evolution's against three quic-go releases built from the module proxy and
# ngtcp2 included, and one goodput run: TestIntegrationStudyEvolutionSmoke, about 54 s warm on a
# busy machine, 31 s for main before the goodput run in the same conditions; and one through Slurm)
# and the quic-go history test (three releases built from the
# module proxy and run against each other, about 70 s from an empty cache), and the interop
# exchange matrix (every exchange case between quic-go and ngtcp2 through an emulated link,
# TestIntegrationExchange, about 115-140 s with longrtt, chacha20, blackhole and ecn, 127-144 s
# with goodput across the stacks (its two 10 MiB runs 11-13 s each, 24-26 s when made twice for
# the emulator late; measured beside another suite), and its
# corruption cases for every pair, TestIntegrationExchangeCorruption, 40-55 s, and its
# built-to-fail cases of a transfer, TestIntegrationExchangeBuiltToFailTransfers, about 30 s;
# its short built-to-fail cases stay in make test), and the HAR round trip (TestIntegrationReplayRoundTrip: a recording
# and three replay runs, one per protocol, 41 s) and the cluster package's job tests (a sweep
# through the one-node Slurm cluster, TestIntegrationSlurmOneNode, 19 s, and the Kubernetes
# Indexed Job run as its completion indexes, TestIntegrationK8sJobSimulated, 21 s), moved on
# 2026-12-07, when make test from an empty cache took 14 min 21 s and 15 min 4 s in two fresh
# clones against its 15: about 10 minutes on 2 cores, so they run in their own target,
# test-studies, which CI runs after make test.
STUDY_TESTS := ^TestIntegration(Study|SlurmStudy|SlurmOneNode|K8sJobSimulated|QuicGoEras|Exchange$$|ExchangeCorruption|ExchangeBuiltToFailTransfers|ReplayRoundTrip)

.PHONY: setup deps netem-deps build test test-netem test-studies unit integration check check-darwin bench fuzz clean image image-deps image-smoke

setup: deps netem-deps build

# deps installs the system packages pltlab needs, only where they are missing (idempotent).
# slurm-wlm and munge are for the one-node Slurm integration test (cluster package).
deps:
	@if command -v chromium >/dev/null && command -v ip >/dev/null && command -v iperf3 >/dev/null && command -v ping >/dev/null \
		&& command -v tshark >/dev/null && command -v node >/dev/null && command -v npm >/dev/null \
		&& command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v ethtool >/dev/null \
		&& command -v gtlsserver >/dev/null && command -v gtlsclient >/dev/null && fc-list 2>/dev/null | grep -q Liberation; then \
		echo "deps: chromium, fonts-liberation, iproute2, iperf3, ping, tshark, node, npm, slurm-wlm, munge, ethtool and ngtcp2 are installed"; \
	else \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium fonts-liberation fontconfig ca-certificates iproute2 iperf3 iputils-ping tshark slurm-wlm munge ethtool ngtcp2-server ngtcp2-client python3 procps; \
		command -v node >/dev/null && command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends nodejs npm; \
	fi

# netem-deps installs what the netem backend's tests need (make test-netem): qemu, Debian's
# kernel (a kernel with sch_netem, tbf and the AQM qdiscs, booted in a guest: not installed as
# the host's running kernel by this), busybox-static for the guest's initramfs, ethtool (the
# backend turns offloads off with it).
netem-deps:
	@if command -v qemu-system-x86_64 >/dev/null && ls /boot/vmlinuz-* >/dev/null 2>&1 && [ -x /bin/busybox ] \
		&& file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' && command -v ethtool >/dev/null; then \
		echo "netem-deps: qemu-system-x86, a kernel in /boot, busybox-static and ethtool are installed"; \
	else \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends qemu-system-x86 linux-image-amd64 busybox-static ethtool file; \
	fi

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/pltlab ./cmd/pltlab

test: check unit integration

# test-netem runs the netem backend's integration tests (link check in a real kernel's tc, the
# qdisc trees, one Chromium load per protocol) in a qemu guest booted over the host's root
# (scripts/test-netem.sh; about 5 minutes on 2 cores). It fails where qemu cannot run.
test-netem:
	scripts/test-netem.sh

# gin prints its routes to stdout unless its process-wide mode is release (pltlab's main sets it;
# test binaries get it from the environment).
export GIN_MODE := release

# nomsgpack leaves gin's MessagePack binding and rendering out (gin's documented build tag):
# pltlab never speaks MessagePack, and the codec gin would link for it (github.com/ugorji/go)
# took 40 s of a 176 s `go vet` from an empty build cache on 2 cores, and as long again in the
# race build (go build -debug-actiongraph, 2026-12-07). Every go command of this Makefile,
# and the builds its tests make, get it through GOFLAGS, so they share one build cache.
export GOFLAGS := $(strip $(GOFLAGS) -tags=nomsgpack)

# The test targets run `go test -vet=off`: check's `go vet ./...` (every analyzer, test files
# included) is a superset of the few go test runs itself, and go test's vet ran again over every
# dependency for each build mode (the race build's vet actions took 107 s of CPU from an empty
# cache, std's 34 s of it).
TEST := $(GO) test -vet=off -count=1

unit:
	$(TEST) -race -short $$($(GO) list ./... | grep -E '$(RACE_PKGS)')
	$(TEST) -short $$($(GO) list ./... | grep -v -E '$(RACE_PKGS)')

integration:
	$(TEST) -p 1 -run Integration -skip '$(STUDY_TESTS)' -timeout $(INTEGRATION_TIMEOUT) ./...

# test-studies runs every study's smoke scale end to end (reproduce, and one study sharded
# through the one-node Slurm cluster): the integration tests of whole studies, kept out of
# make test for its time budget and run by CI after it.
test-studies:
	$(TEST) -p 1 -run '$(STUDY_TESTS)' -timeout 15m ./cmd/pltlab ./cluster ./interop/...

# check: gofmt, go vet, staticcheck (pinned by the tool directive in go.mod) and the package
# layering tests (internal/layers: dependencies point the way docs/design.md draws them, and no
# function is over 100 lines).
check:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(TEST) ./internal/layers

# check-darwin is the macOS build (links and loads need Linux, and fail there with
# errors.ErrUnsupported; the build keeps analyze, view and the other result commands buildable
# for a researcher's laptop: the Linux-only files carry build tags and stubs; the build is
# checked, not run). It compiles the whole tree and the standard library once more for another
# OS: 10 s with a warm build cache, about 3 minutes from an empty one on 2 cores, so it is out of
# make test's budget and CI runs it after make test.
check-darwin:
	GOOS=darwin $(GO) build -o /dev/null ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...
	@if [ "$$(id -u)" = 0 ] && command -v python3 >/dev/null && command -v iperf3 >/dev/null; then \
		$(MAKE) build && scripts/bench-fastpath.sh; \
	else echo "bench: the emulator's fast path vs plain path side by side needs root, python3 and iperf3 (scripts/bench-fastpath.sh)"; fi

fuzz:
	@echo "run one fuzz target at a time, e.g.: go test -fuzz FuzzParseSpec ./pages"

# image builds the container image of the Dockerfile with podman, offline: the FROM images are
# made locally (scripts/image-bases.sh: a debootstrapped bookworm and the host's Go toolchain) and
# the Go modules and build cache come from the host's. Minutes, so not part of `make test`;
# image-smoke then measures a small page inside the image (README, "Running on a cluster").
# PODMAN_FLAGS suit machines like the development one: crun refuses its hybrid cgroup v1/v2
# layout (runc accepts it), and without CAP_SYS_RESOURCE podman's default rlimits cannot be set.
IMAGE ?= localhost/pltlab:latest
PODMAN_FLAGS ?= --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096
image: image-deps
	scripts/image-bases.sh
	podman build $(PODMAN_FLAGS) --pull=never --network=host -v "$$($(GO) env GOMODCACHE)":/go/pkg/mod \
		-v "$$($(GO) env GOCACHE)":/root/.cache/go-build \
		--build-arg GOPROXY=off --build-arg VERSION=$(VERSION) -t $(IMAGE) .

image-deps:
	@if command -v podman >/dev/null && command -v buildah >/dev/null && command -v debootstrap >/dev/null && command -v runc >/dev/null; then \
		echo "image-deps: podman, buildah, runc and debootstrap are installed"; \
	else \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends podman buildah runc debootstrap; \
	fi

image-smoke:
	podman run $(PODMAN_FLAGS) --rm --network=host $(IMAGE) version
	podman run $(PODMAN_FLAGS) --rm --network=host $(IMAGE) run --page 2x5KB --link none --protocols h2,h3 --runs 2 --warmup 0 --tcp-cc reno --out - >/dev/null

clean:
	rm -rf bin
