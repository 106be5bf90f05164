// Package all registers every implementation: import it for its side effect.
package all

import (
	_ "github.com/locklab/locklab/impls/control"
	_ "github.com/locklab/locklab/impls/redislock"
)
