package lessons

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redlock"
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
	// claimsHolderHolds is how long the killed holder means to hold the
	// lock: far longer than the measurement, so that only its SIGKILL
	// ends its session.
	claimsHolderHolds = time.Minute
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

// runDocClaims has the engine measure every claim, as it runs every run:
// on the five Redis nodes redlock declares (engine.RedlockClaimsJob),
// then on the ZooKeeper zookeeper declares (engine.EphemeralJob), each
// started and stopped by engine.Run. A measurement the checker finds not
// safe (a race nobody won, a grant no majority voted for, a holder whose
// refresh disagrees with the server, no grant or no trial at all) stops
// the regeneration; what the page's sentences say of the figures,
// DocClaimsProblems holds it to.
func runDocClaims(ctx context.Context, logf func(string, ...any), sc DocClaimsScale) (DocClaimsRecord, error) {
	rec := DocClaimsRecord{Generated: time.Now().UTC().Format("2006-01-02 15:04 MST")}
	redlockSpec, err := impls.Lookup(docclaims.Redlock)
	if err != nil {
		return rec, err
	}
	claims := engine.RedlockClaims{
		Down:        docclaims.DownOptions{TTL: claimsTTL, Acquires: sc.Acquires},
		NodeTimeout: redlock.NodeTimeout(claimsTTL),
		Script:      docclaims.ScriptOptions{Clients: claimsScriptOthers, Window: claimsScriptWindow, Script: claimsScriptFor, LeaseTTL: claimsLeaseTTL},
	}
	for _, n := range claimsSplitClients {
		claims.Split = append(claims.Split, docclaims.SplitOptions{Clients: n, Rounds: sc.Rounds, TTL: claimsTTL, Bound: claimsSplitBound})
	}
	for _, hold := range claimsHolds {
		claims.Budget = append(claims.Budget, docclaims.BudgetOptions{Clients: claimsBudgetClient, TTL: claimsTTL, Budget: claimsTTL / 2, Hold: hold, Duration: sc.Budget})
	}
	var m engine.RedlockClaimsMeasured
	out, err := engine.Run(ctx, engine.RedlockClaimsJob(claims, &m), engine.Options{Impl: redlockSpec, Seed: 1, TTL: claimsTTL, Logf: logf})
	if err != nil {
		return rec, fmt.Errorf("redlock's claims: %w", err)
	}
	if !checker.Survived(out.Verdict) {
		return rec, fmt.Errorf("redlock's claims are %s (%s): the lock did not keep to its rule", out.Verdict, out.Detail)
	}
	rec.Split, rec.Down, rec.Budget, rec.Script = m.Split, m.Down, m.Budget, m.Script

	zkSpec, err := impls.Lookup(docclaims.ZooKeeper)
	if err != nil {
		return rec, err
	}
	eph := docclaims.EphemeralOptions{Session: claimsSession, Trials: sc.Trials}
	out, err = engine.Run(ctx, engine.EphemeralJob(eph, claimsHolderHolds, &rec.Ephemeral), engine.Options{Impl: zkSpec, Seed: 1, TTL: claimsSession, Logf: logf})
	if err != nil {
		return rec, fmt.Errorf("the ephemeral node: %w", err)
	}
	if !checker.Survived(out.Verdict) {
		return rec, fmt.Errorf("the ephemeral node is %s (%s)", out.Verdict, out.Detail)
	}
	return rec, nil
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
