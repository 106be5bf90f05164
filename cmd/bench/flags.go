package main

import (
	"flag"
	"time"
)

// The flags several commands share, each with one spelling and one meaning
// everywhere; a command picks its own default where its runs differ.

// fencingFlag is -fencing: the resource refuses stale fencing tokens.
func fencingFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("fencing", false, "the resource refuses writes with stale fencing tokens")
}

// ttlFlag is -ttl: the lease TTL, or ZooKeeper session timeout, of every
// run; note says what a zero default stands for, if anything.
func ttlFlag(fs *flag.FlagSet, def time.Duration, note string) *time.Duration {
	help := "lease TTL / session timeout"
	if note != "" {
		help += " " + note
	}
	return fs.Duration("ttl", def, help)
}

// seedFlag is -seed; zero draws one from the clock, and every command
// prints the seed it used. what says what the seed fixes in that command.
func seedFlag(fs *flag.FlagSet, what string) *int64 {
	return fs.Int64("seed", 0, what+" (default: from the clock)")
}

// outFlag is -out, the directory a command writes to (checked before any
// work: checkOutDir).
func outFlag(fs *flag.FlagSet, def, what string) *string {
	return fs.String("out", def, "directory for "+what)
}
