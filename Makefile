# Convenience targets; every one is a plain go or make command you can run
# yourself.
GO ?= go

.PHONY: build test test-long test-short cuda ref fuzz bench clean

build:
	CGO_ENABLED=0 $(GO) build -o bin/trigrid ./cmd/trigrid

# The README's test command.
test:
	$(GO) test -race ./...

# The long tests (dataset and partition sweeps, large graphs), as CI's
# second pass runs them.
test-long:
	TRIGRID_LONG_TESTS=1 $(GO) test -timeout 60m ./...

test-short:
	$(GO) test -short ./...

# The CUDA library (needs nvcc) and the plain-C reference library of the same
# ABI (needs gcc).
cuda:
	$(MAKE) -C kernels/cuda

ref:
	$(MAKE) -C kernels/cuda ref

# Every fuzz target for FUZZTIME each (default 30s): scripts/fuzz.sh.
FUZZTIME ?= 30s
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
	-$(MAKE) -C kernels/cuda clean
