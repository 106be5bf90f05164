//go:build !mutants

package redisfair

import "github.com/redis/go-redis/v9"

// Without the mutants build tag redis-fair runs as written: this is
// mutants.go's switch with no mutant compiled in (see package mutant).

// releaseScriptNow is the release script.
func releaseScriptNow() *redis.Script { return releaseScript }
