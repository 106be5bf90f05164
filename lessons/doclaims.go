package lessons

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redlock"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/topology"
	"github.com/locklab/locklab/workload/docclaims"
)

// The settings of the source documents' last claims. Redlock's lease is a
// second, as the lab's runs use; 004_84007c392b46b35c.txt's waiting budget
// is half of it. The slow script spins for as long as
// 000_4c93f78eaeec54ee.txt's single-threaded Redis would be blocked by a
// script that does real work on a large key, and the lease it meets is
// shorter than that, as a short lease with a watchdog is.
const (
	claimsTTL          = time.Second
	claimsSplitRounds  = 120
	claimsSplitBound   = 2 * time.Second
	claimsDownAcquires = 50
	claimsScriptFor    = 200 * time.Millisecond
	claimsScriptWindow = time.Second
	claimsScriptOthers = 4
	claimsLeaseTTL     = 150 * time.Millisecond
	claimsBudgetFor    = 3 * time.Second
	claimsBudgetClient = 8
	claimsSession      = time.Second
	claimsEphTrials    = 3
)

// claimsSplitClients are the racers for the free lock: as many as nodes,
// and twice that.
var claimsSplitClients = []int{5, 10}

// claimsHolds are the waiting-budget rows' work per grant: a queue of the
// other clients that fits in half the TTL, and one that does not.
var claimsHolds = []time.Duration{40 * time.Millisecond, 120 * time.Millisecond}

// DocClaimsRecord is what the page on the documents' last claims measured,
// kept in docclaims.json beside the pages.
type DocClaimsRecord struct {
	Generated string                      `json:"generated"`
	Split     []docclaims.SplitResult     `json:"split_votes"`
	Down      docclaims.DownResult        `json:"nodes_down"`
	Script    docclaims.ScriptResult      `json:"slow_script"`
	Budget    []docclaims.BudgetRow       `json:"half_ttl_budget"`
	Ephemeral []docclaims.EphemeralResult `json:"ephemeral_node"`
}

// DocClaimsScale shrinks the runs for a smoke test: 1 is the page's.
type DocClaimsScale struct {
	Rounds, Acquires, Trials int
	Budget                   time.Duration
}

var pageScale = DocClaimsScale{Rounds: claimsSplitRounds, Acquires: claimsDownAcquires, Trials: claimsEphTrials, Budget: claimsBudgetFor}

// runDocClaims starts the servers redlock declares (five Redis nodes) and
// those zookeeper declares, and measures every claim on them.
func runDocClaims(ctx context.Context, logf func(string, ...any), sc DocClaimsScale) (DocClaimsRecord, error) {
	rec := DocClaimsRecord{Generated: time.Now().UTC().Format("2006-01-02 15:04 MST")}
	topo, _, err := startLockServers(ctx, docclaims.Redlock)
	if err != nil {
		return rec, fmt.Errorf("redlock's servers: %w", err)
	}
	defer topo.Close()
	nodes := topo.Lock(topology.Redis)
	addrs := topo.Endpoints().Addrs(topology.Redis)

	for _, n := range claimsSplitClients {
		logf("lesson claims: split votes, %d redlock clients, %d rounds each way", n, sc.Rounds)
		split, err := docclaims.MeasureSplitVotes(ctx, docclaims.SplitOptions{Redis: addrs, Clients: n, Rounds: sc.Rounds, TTL: claimsTTL, Bound: claimsSplitBound})
		if err != nil {
			return rec, fmt.Errorf("split votes: %w", err)
		}
		rec.Split = append(rec.Split, split...)
	}
	logf("lesson claims: redlock with nodes stalled, %d acquires per row", sc.Acquires)
	if rec.Down, err = docclaims.MeasureNodesDown(ctx, docclaims.DownOptions{Redis: addrs, TTL: claimsTTL, Acquires: sc.Acquires,
		Stall: func(i int) error { return nodes[i].Pause() }, Wake: func(i int) error { return nodes[i].Resume() }}, redlock.NodeTimeout(claimsTTL)); err != nil {
		return rec, fmt.Errorf("nodes down: %w", err)
	}
	for _, hold := range claimsHolds {
		logf("lesson claims: waiting budget TTL/2, %d clients, work %s", claimsBudgetClient, hold)
		row, err := docclaims.MeasureBudget(ctx, docclaims.BudgetOptions{Redis: addrs, Clients: claimsBudgetClient, TTL: claimsTTL, Budget: claimsTTL / 2, Hold: hold, Duration: sc.Budget})
		if err != nil {
			return rec, fmt.Errorf("waiting budget: %w", err)
		}
		rec.Budget = append(rec.Budget, row)
	}
	logf("lesson claims: a %s script on one node, %d other clients", claimsScriptFor, claimsScriptOthers)
	if rec.Script, err = docclaims.MeasureSlowScript(ctx, docclaims.ScriptOptions{Redis: addrs[0], Clients: claimsScriptOthers, Window: claimsScriptWindow, Script: claimsScriptFor, LeaseTTL: claimsLeaseTTL}); err != nil {
		return rec, fmt.Errorf("slow script: %w", err)
	}

	// The holder in its own process is a worker of the lab's runs, which
	// writes the protected counter while it holds: its Redis too.
	spec, err := impls.Lookup(docclaims.ZooKeeper)
	if err != nil {
		return rec, err
	}
	zkTopo, err := cluster.Start(ctx, spec.Backend.Topology().Merge(topology.Of(topology.ResourceNode())), cluster.External{})
	if err != nil {
		return rec, fmt.Errorf("zookeeper's servers: %w", err)
	}
	defer zkTopo.Close()
	logs, err := os.MkdirTemp("", "locklab-claims-")
	if err != nil {
		return rec, err
	}
	defer os.RemoveAll(logs)
	logf("lesson claims: ephemeral node, session %s, %d trials each way", claimsSession, sc.Trials)
	rec.Ephemeral, err = docclaims.MeasureEphemeral(ctx, docclaims.EphemeralOptions{
		ZooKeeper: zkTopo.Endpoints().Addrs(topology.ZooKeeper), Session: claimsSession, Trials: sc.Trials,
		StartHolder: func(ctx context.Context, key string) (func(), error) { return startZKHolder(ctx, zkTopo, logs, key) },
	})
	if err != nil {
		return rec, fmt.Errorf("ephemeral node: %w", err)
	}
	return rec, nil
}

// startZKHolder starts a worker process (package runner) that takes the
// zookeeper lock on key and holds it far longer than the measurement, so
// that only its SIGKILL ends its session.
func startZKHolder(ctx context.Context, topo *cluster.Topology, dir, key string) (func(), error) {
	hold := time.Minute
	w, err := runner.Start(ctx, runner.WorkerSpec{
		Impl: docclaims.ZooKeeper, ID: 1, Key: key, Servers: topo.Endpoints(), Resource: topo.ResourceAddr,
		TTL: claimsSession, WorkMin: hold, WorkMax: hold, AcquireTimeout: 2 * hold,
		History: filepath.Join(dir, key+".history"),
	}, filepath.Join(dir, key+".log"), nil, 30*time.Second)
	if err != nil {
		return nil, err
	}
	return w.Kill, nil
}

func loadDocClaims(dir string) (*DocClaimsRecord, error) {
	return loadRecord[DocClaimsRecord](dir, "docclaims.json")
}

func saveDocClaims(dir string, r DocClaimsRecord) error { return saveRecord(dir, "docclaims.json", r) }

// docClaimsBlocksInto measures the claims (unless opt.NoRun), refuses a
// measurement the page's sentences do not hold for, saves it, and fills
// the page's blocks from docclaims.json.
func docClaimsBlocksInto(ctx context.Context, opt Options, blocks map[string]string) error {
	rec, err := loadDocClaims(opt.Dir)
	if err != nil {
		return err
	}
	if !opt.NoRun {
		r, err := runDocClaims(ctx, opt.Logf, pageScale)
		if err != nil {
			return err
		}
		if msgs := DocClaimsProblems(r); len(msgs) > 0 {
			return fmt.Errorf("the measurement contradicts the page: %s", strings.Join(msgs, "; "))
		}
		if err := saveDocClaims(opt.Dir, r); err != nil {
			return err
		}
		rec = &r
	}
	maps.Copy(blocks, docClaimsBlocks(rec))
	return nil
}
