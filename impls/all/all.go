// Package all registers every implementation: import it for its side effect.
package all

import (
	_ "github.com/locklab/locklab/impls/control"
	_ "github.com/locklab/locklab/impls/etcdlock"
	_ "github.com/locklab/locklab/impls/guest"
	_ "github.com/locklab/locklab/impls/mysqllock"
	_ "github.com/locklab/locklab/impls/peers"
	_ "github.com/locklab/locklab/impls/pglock"
	_ "github.com/locklab/locklab/impls/redisfair"
	_ "github.com/locklab/locklab/impls/redislock"
	_ "github.com/locklab/locklab/impls/redisson"
	_ "github.com/locklab/locklab/impls/redlock"
	_ "github.com/locklab/locklab/impls/zklock"
)
