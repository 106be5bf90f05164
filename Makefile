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
# Every cell of a mutant's lock on every topology that lock runs on (a
# catch on one topology says nothing of another's fail-over), the designed
# catcher first: 610 cells that can catch (32 mutants), against 355 on
# single and redis-sentinel alone, which took 36 minutes at 885c81df, so
# expect well over an hour on two cores. Shard it (`bench mutants -shard
# i/n -seed S`, then `bench merge`) or name fewer topologies, e.g.
# MUTANTTOPOLOGIES=single,redis-sentinel.
MUTANTTOPOLOGIES ?=
# The site is rendered whatever the verdict: a surviving mutant (exit 1)
# is what a reader most needs to see; the target still fails after it.
mutants: setup
	@status=0; $(GO) run $(MUTANTTAGS) ./cmd/bench mutants $(if $(MUTANTTOPOLOGIES),-topology $(MUTANTTOPOLOGIES)) || status=$$?; \
		$(GO) run ./cmd/bench report && exit $$status

# Every lock's conformance and adversarial suites in full, the guests' too
# (make test runs a guest's without its adversarial suites).
conformance: setup
	LOCKLAB_MATRIX_ALL=1 $(GO) test $(TESTFLAGS) -run 'TestConformance' ./impls/...
.PHONY: conformance

lessons: setup
	$(GO) run ./cmd/bench lessons
.PHONY: lessons

# Every lock and peer under a seeded random nemesis, on every topology,
# unfenced and fenced (results/explore/ for the single topology, explore/T/
# for each other, explore/fenced/ and explore/T-fenced/ for the fenced
# tables), plus the fixed holder-partition for pg-advisory and zookeeper;
# each lock is explored with up to EXPLORESEEDS seeds, stopping at its
# first counterexample, which is shrunk and replayed. Seed s opens with the
# ((s-1) mod n)-th of the n kinds that can strike at the holder, in name
# order (docs/explore.md): three seeds open with client-kill and
# client-pause among them on every topology; EXPLORESEEDS=15 opens with
# every kind that can, everywhere (a safe lock then runs 15 minutes).
# Then `bench recall`
# measures what explore found on its own of what the matrix proves
# (results/explore/recall.md). Long (hours: each lock runs for the duration
# per seed, then shrinks); not part of test; shard it across machines
# with -shard i/n and `bench merge` (docs/sharding.md).
EXPLORESEEDS ?= 3
EXPLOREFLAGS ?= -duration 1m -seed 1 -seeds $(EXPLORESEEDS) -shrink-time 2m -rerun-without server-clock-jump,server-restart-empty
EXPLORETOPOLOGIES ?= zk-ensemble etcd-cluster redis-sentinel redis-sentinel-min-replicas redis-cluster pg-replica-async pg-replica-sync mysql-replica-async mysql-replica-semisync pg-idle-timeouts mysql-wait-timeout
explore: setup
	$(GO) run ./cmd/bench explore -impl all $(EXPLOREFLAGS) -out results/explore
	$(GO) run ./cmd/bench explore -impl all -fencing $(EXPLOREFLAGS) -out results/explore/fenced
	for t in $(EXPLORETOPOLOGIES); do \
		$(GO) run ./cmd/bench explore -impl all -topology $$t $(EXPLOREFLAGS) -out results/explore/$$t || exit 1; \
		$(GO) run ./cmd/bench explore -impl all -topology $$t -fencing $(EXPLOREFLAGS) -out results/explore/$$t-fenced || exit 1; \
	done
	$(GO) run ./cmd/bench recall
	$(GO) run ./cmd/bench report
.PHONY: explore
