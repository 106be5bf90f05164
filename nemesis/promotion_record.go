package nemesis

import (
	"context"
	"fmt"
	"sync"

	"github.com/locklab/locklab/cluster"
	lin "github.com/locklab/locklab/linearizability"
)

// The record of a fail-over, read from the servers. Every fault that
// kills a master or primary and puts a replica in its place (server-kill
// and server-restart-empty on a Redis master with replicas, which its
// Sentinel group or its Redis Cluster then fails over; fail-over;
// replica-promote; primary-promotion; lagging-master-kill;
// lagging-promotion) reads the master's write position just before it
// strikes, and the promoted replica's own position once it is promoted
// (cluster.BehindReporter: the one reader of both), so the history says
// whether the promotion lost what the master had written by the strike,
// the holder's grant and fencing increment among it. The engine takes the
// record with the fault's (TakePromotion) and the checker judges by it.

// promotions holds each struck master's record from its strike until the
// engine takes it. Keyed by the run's own node, so runs side by side in
// one process never meet.
var promotions = struct {
	sync.Mutex
	m map[*cluster.Node]*promotionMark
}{m: map[*cluster.Node]*promotionMark{}}

type promotionMark struct {
	rec lin.Promotion
	at  cluster.Position
	// candidates are the master's replicas at the strike, one of which
	// its group promotes (a Sentinel group's, a Redis Cluster's).
	candidates []*cluster.Node
}

// markStrike reads master's write position right before a fault kills it,
// with the replicas that may be promoted in its place. A read that fails
// is recorded as such; it never stops the fault.
func markStrike(ctx context.Context, master *cluster.Node, candidates []*cluster.Node) {
	m := &promotionMark{rec: lin.Promotion{Master: master.Name}, candidates: candidates}
	at, err := cluster.WritePosition(ctx, master)
	if err != nil {
		m.rec.Unread = fmt.Sprintf("%s's write position: %v", master.Name, err)
	} else {
		m.at, m.rec.MasterAt, m.rec.Unit = at, at.Said, at.Unit
	}
	promotions.Lock()
	promotions.m[master] = m
	promotions.Unlock()
}

// markRedisStrike is markStrike for a fault that kills a server the
// servers' own group fails over (server-kill on a Sentinel group's or a
// Redis Cluster's master): only a Redis master with replicas is marked,
// its replicas (as INFO replication names them) the candidates; any other
// server is left alone, as nothing will be promoted in its place.
func markRedisStrike(ctx context.Context, sys System, n *cluster.Node) {
	w, err := cluster.WatchReplication(n)
	if err != nil {
		return // not a Redis server: no replica to promote
	}
	r, err := w.Read(ctx)
	w.Close()
	if err != nil || r.Role != "master" || len(r.Replicas) == 0 {
		return
	}
	candidates, err := replicasOf(sys, r)
	if err != nil {
		candidates = nil // markPromotedAmong then asks every lock server
	}
	markStrike(ctx, n, candidates)
}

// markPromoted reads promoted's own position, the one it was promoted
// with, into master's record.
func markPromoted(ctx context.Context, master, promoted *cluster.Node) {
	held, err := cluster.HeldPosition(ctx, promoted)
	promotions.Lock()
	defer promotions.Unlock()
	m := promotions.m[master]
	switch {
	case m == nil || m.rec.Unread != "":
	case err != nil:
		m.rec.Unread = fmt.Sprintf("%s's position: %v", promoted.Name, err)
	default:
		m.rec.Promoted, m.rec.PromotedAt, m.rec.Behind = promoted.Name, held.Said, held.Lacks(m.at)
	}
}

// markPromotedAmong finds which of master's candidates its group has
// promoted, by each one's own word (INFO replication's role), and marks
// it; none promoted yet leaves the record without one.
func markPromotedAmong(ctx context.Context, sys System, master *cluster.Node) {
	promotions.Lock()
	m := promotions.m[master]
	promotions.Unlock()
	if m == nil {
		return
	}
	candidates := m.candidates
	if len(candidates) == 0 {
		for _, name := range sys.LockServers() {
			if n, err := sys.Server(name); err == nil && n != master {
				candidates = append(candidates, n)
			}
		}
	}
	for _, c := range candidates {
		w, err := cluster.WatchReplication(c)
		if err != nil {
			continue
		}
		r, err := w.Read(ctx)
		w.Close()
		if err == nil && r.Role == "master" && r.PromotedAt >= 0 {
			markPromoted(ctx, master, c)
			return
		}
	}
}

// TakePromotion returns the record of the fail-over a fault struck at
// target (a server, or a holder@server link), and forgets it; nil when the
// fault promoted nothing.
func TakePromotion(sys System, target string) *lin.Promotion {
	if _, server, ok := SplitLink(target); ok {
		target = server
	}
	n, err := sys.Server(target)
	if err != nil {
		return nil
	}
	promotions.Lock()
	defer promotions.Unlock()
	m := promotions.m[n]
	delete(promotions.m, n)
	if m == nil {
		return nil
	}
	rec := m.rec
	return &rec
}
