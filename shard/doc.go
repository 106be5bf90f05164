// Package shard splits a long run's cells over machines and puts their
// results back together.
//
// A cell goes to the shard its key hashes to (FNV-1a of the key, modulo
// the shard count): the split depends on nothing but the key and the
// count, so any machine can run any shard, a lock added to the lab moves
// no other cell, and every cell lands in exactly one shard. A sharded run
// writes a Partial (one JSON file per shard, with the cells' full results
// and their files); Combine checks a set of partials is one run, whole
// (same command, commit and options; every shard once), and hands back
// the cells in the unsharded run's order, so the command writes its
// results with the same writers as an unsharded run.
package shard
