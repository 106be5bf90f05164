# Two commands on a fresh machine: `make test` and `make bench`.
# Each first installs what is missing (scripts/setup.sh).

GO ?= go
# One package at a time: each test starts its own servers and worker processes,
# and fault timing is judged in real time, so packages must not starve each other
# on a 2-core machine. The verdict matrix takes most of the run either way.
TESTFLAGS ?= -count=1 -timeout 60m -p 1
# Files tests keep for a person to look at (t.ArtifactDir: the report
# site's screenshots from the browser test) land under here.
ARTIFACTS ?= $(CURDIR)/test-artifacts

.PHONY: setup test bench matrix mutants vet fmt lint report

# The results as one static site (results/site/index.html), rendered from
# the JSON the long commands write; each of them runs it after its run.
report:
	$(GO) run ./cmd/bench report

# staticcheck pinned here, run with `go run` so it needs no install and adds
# nothing to go.mod (v0.8.x is the release that knows go 1.26).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

setup:
	@bash scripts/setup.sh

# The mutants are compiled in only under the `mutants` build tag (see
# impls/mutant), so `./...` builds none of them; the second pass runs their
# own tests, tagged: the registry, and five of them caught on their cells.
MUTANTTAGS ?= -tags mutants

test: setup lint
	@mkdir -p $(ARTIFACTS)
	$(GO) test $(TESTFLAGS) -artifacts -outputdir $(ARTIFACTS) ./...
	$(GO) test $(TESTFLAGS) $(MUTANTTAGS) ./impls/mutant/

# Fails when gofmt would change a file, when go.mod/go.sum are not tidy, or
# when go vet or staticcheck report anything, with the mutants compiled in
# or not. `make test` runs it first.
lint:
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then \
		echo "gofmt would change these files (run make fmt):"; echo "$$unformatted"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet ./...
	$(GO) vet $(MUTANTTAGS) ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(STATICCHECK) $(MUTANTTAGS) ./...

bench: setup
	$(GO) run ./cmd/bench bench
	@# A short container-mode pass beside it (results/containers/): what the
	@# container network costs per acquisition. Skipped, saying so, without an engine.
	@if docker info >/dev/null 2>&1; then $(GO) run ./cmd/bench bench -servers containers -quick; \
	else echo "no Docker engine answers: container-mode figures (results/containers/) skipped"; fi
	$(GO) run ./cmd/bench report

# Every lock under every fault: results/correctness.md and counterexamples.
# Every cell under the lab's fast timeouts, and the cells a ratio of
# timeouts decides (topology.Production.Runs) again under the production
# profile's (10 s sessions and leases, the servers' default detection and
# replication timeouts): one matrix, whose report says where they differ.
matrix: setup
	$(GO) run ./cmd/bench matrix -profile fast,production
	$(GO) run ./cmd/bench report

vet:
	$(GO) vet ./...
	$(GO) vet $(MUTANTTAGS) ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# Every mutant (our correct locks broken on purpose, impls/mutant) on every
# cell of its lock: results/mutants.md; fails if a mutant survives. Only a
# bench built with the mutants tag holds them.
# Every designed catcher is a cell of the single topology or of
# redis-sentinel (the WAIT lock's); the other topologies' cells repeat the
# single ones' catches at several times their cost (on every topology the
# first mutant alone had run 32 cells in four minutes and was not done; on
# these two it runs 20 in three), so make mutants runs these two.
MUTANTTOPOLOGIES ?= single,redis-sentinel
# The site is rendered whatever the verdict: a surviving mutant (exit 1)
# is what a reader most needs to see; the target still fails after it.
mutants: setup
	@status=0; $(GO) run $(MUTANTTAGS) ./cmd/bench mutants -topology $(MUTANTTOPOLOGIES) || status=$$?; \
		$(GO) run ./cmd/bench report && exit $$status

# Every lock's conformance and adversarial suites in full, the guests' too
# (make test runs a guest's without its adversarial suites).
conformance: setup
	LOCKLAB_MATRIX_ALL=1 $(GO) test $(TESTFLAGS) -run 'TestConformance' ./impls/...
.PHONY: conformance

lessons: setup
	$(GO) run ./cmd/bench lessons
.PHONY: lessons

# Every lock and peer under a seeded random nemesis, plus the fixed
# holder-partition for pg-advisory and zookeeper: results/explore/README.md,
# explore.json and one minimal, replayed counterexample per broken lock.
# Long (each lock runs for the duration, then shrinks); not part of test.
EXPLOREFLAGS ?= -duration 2m -seed 1 -shrink-time 2m -rerun-without server-clock-jump,server-restart-empty
# Each topology but the single one gets a table of its own, beside it: every
# lock the topology carries, but on the Redis groups only the correct Redis
# locks and the peers (EXPLOREHA): a lock broken on one server is broken on
# a group too, and each lock costs minutes of exploring.
EXPLORETOPOLOGIES ?= zk-ensemble etcd-cluster redis-sentinel redis-cluster
EXPLOREHA ?= redis-setnx-px,redis-setnx-px-wait,redis-reentrant,redis-fair,peer-redislock,peer-redsync
explore: setup
	$(GO) run ./cmd/bench explore -impl all $(EXPLOREFLAGS) -out results/explore
	for t in $(EXPLORETOPOLOGIES); do \
		impl=all; case $$t in redis-*) impl=$(EXPLOREHA);; esac; \
		$(GO) run ./cmd/bench explore -impl $$impl -topology $$t $(EXPLOREFLAGS) -out results/explore/$$t || exit 1; \
	done
	$(GO) run ./cmd/bench report
.PHONY: explore
