# pltlab: two commands do all set-up: `make setup` and `make test`.
GO      ?= go
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
GOFILES  = $(shell find . -name '*.go' -not -path './bin/*')
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Integration tests (real server, emulator and Chromium) are named TestIntegration*; unit tests
# run with the race detector and -short, which skips them.
INTEGRATION_TIMEOUT ?= 14m

.PHONY: setup deps build test unit integration check bench fuzz clean

setup: deps build

# deps installs the system packages pltlab needs, only where they are missing (idempotent).
deps:
	@if command -v chromium >/dev/null && command -v ip >/dev/null && command -v iperf3 >/dev/null && command -v ping >/dev/null \
		&& command -v tshark >/dev/null && command -v node >/dev/null && command -v npm >/dev/null; then \
		echo "deps: chromium, iproute2, iperf3, ping, tshark, node and npm are installed"; \
	else \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium iproute2 iperf3 iputils-ping tshark; \
		command -v node >/dev/null && command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nodejs npm; \
	fi

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/pltlab ./cmd/pltlab

test: check unit integration

# gin prints its routes to stdout unless its process-wide mode is release (pltlab's main sets it;
# test binaries get it from the environment).
export GIN_MODE := release

unit:
	$(GO) test -race -short -count=1 ./...

integration:
	$(GO) test -count=1 -p 1 -run Integration -timeout $(INTEGRATION_TIMEOUT) ./...

# check: gofmt, go vet, staticcheck (pinned by the tool directive in go.mod) and the package
# layering test (internal/layers: dependencies point the way docs/design.md draws them).
check:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) test -count=1 ./internal/layers

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

fuzz:
	@echo "run one fuzz target at a time, e.g.: go test -fuzz FuzzParseSpec ./pages"

clean:
	rm -rf bin
