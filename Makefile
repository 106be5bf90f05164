# Two commands on a fresh machine: `make test` and `make bench`.
# Each first installs what is missing (scripts/setup.sh).

GO ?= go
# Packages are tested two at a time at most (2 cores); each test starts its own servers.
TESTFLAGS ?= -count=1 -timeout 60m -p 2

.PHONY: setup test bench matrix vet fmt

setup:
	@bash scripts/setup.sh

test: setup
	$(GO) vet ./...
	$(GO) test $(TESTFLAGS) ./...

bench: setup
	$(GO) run ./cmd/bench bench

# Every lock under every fault: results/correctness.md and counterexamples.
matrix: setup
	$(GO) run ./cmd/bench matrix

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

lessons: setup
	$(GO) run ./cmd/bench lessons
.PHONY: lessons
