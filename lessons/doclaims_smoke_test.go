package lessons

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestDocClaimsSmoke runs every measurement of the documents' last claims
// on real servers at a small scale and holds each to having measured
// something: a grant in every split-vote round, a row per count of stalled
// nodes with the last refused, the script's block seen by the other
// clients, both budget rows, and a deletion for each way of dying; then
// holds the small run to the page's sentences too (DocClaimsProblems; the
// share of split rounds only on a run of minRoundsForSplitShare). It
// takes about 9 s (five Redis nodes and a ZooKeeper started once); the
// page's own, larger run is the committed docclaims.json, which
// TestCommittedDocClaimsAgreeWithPage reads.
func TestDocClaimsSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis and ZooKeeper")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rec, err := runDocClaims(ctx, t.Logf, DocClaimsScale{Rounds: 5, Acquires: 5, Trials: 2, Budget: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Split) == 0 || len(rec.Down.Rows) == 0 || len(rec.Script.Rows) == 0 || len(rec.Budget) == 0 || len(rec.Ephemeral) == 0 {
		t.Fatal("a measurement recorded nothing")
	}
	for _, msg := range DocClaimsProblems(rec) {
		t.Error(msg)
	}
	if t.Failed() {
		b, _ := json.MarshalIndent(rec, "", " ")
		t.Logf("the run: %s", b)
	}
}
