package impls

// Footprint is what a lock keeps on its server while it holds a key,
// written down from its Summary and doc comments so that the conformance
// suite (impls/conformance's ServerSideShape) can read the server's side
// back and compare: every key, node, row and session lock the lock makes,
// and nothing else. Names use K for the lock key. The lock declares it;
// the suite, which knows how to read each server kind, checks it, so a
// lock package never imports the suite and the suite keeps no list of
// locks.
type Footprint struct {
	Redis []RedisKey `json:"redis,omitempty"`
	// ZKDir is the lock's directory (persistent); ZKChild is a regular
	// expression matching the name of each contender's node in it
	// (ephemeral, sequential).
	ZKDir   string `json:"zookeeper_dir,omitempty"`
	ZKChild string `json:"zookeeper_child,omitempty"`
	// PGTable is the table holding one row per key; PGVersionIsToken says
	// its version column is the lease's fencing token.
	PGTable          string `json:"postgres_table,omitempty"`
	PGVersionIsToken bool   `json:"postgres_version_is_token,omitempty"`
	// PGAdvisory: a session advisory lock on hashtextextended(K, 0).
	PGAdvisory bool `json:"postgres_advisory,omitempty"`
	// PGRowLocked: the key's row is locked by the lease's transaction.
	PGRowLocked bool `json:"postgres_row_locked,omitempty"`
	// MySQLTable is the MySQL table holding a row for K while held (for
	// locklab_row_lock, a row the lease's transaction has locked);
	// MySQLGetLock says a session holds the GET_LOCK name of K.
	MySQLTable   string `json:"mysql_table,omitempty"`
	MySQLGetLock bool   `json:"mysql_get_lock,omitempty"`
	// MySQLVersionIsToken: the row's version column is the lease's token.
	MySQLVersionIsToken bool `json:"mysql_version_is_token,omitempty"`
}

// RedisKey is one key a lock keeps on Redis while it holds K.
type RedisKey struct {
	Name    string `json:"name"`              // with K for the lock key
	Type    string `json:"type"`              // "string", "hash", ...
	Expires bool   `json:"expires,omitempty"` // a TTL of at most the lease's; false: no expiry
	// IsToken: the key's value is the lease's fencing token (the counter
	// the token was drawn from).
	IsToken bool `json:"is_token,omitempty"`
}

// Declared reports whether the lock declared a footprint at all.
func (f Footprint) Declared() bool {
	return len(f.Redis) > 0 || f.ZKDir != "" || f.PGTable != "" || f.PGAdvisory || f.MySQLTable != "" || f.MySQLGetLock
}

// ProtectedSequentialChild matches go-zookeeper's protected ephemeral
// sequential node name ("_c_<guid>-lock-<seq>"), which its zk.Lock (the
// peer-zk-lock) makes and the zookeeper lock makes the same way, so that
// the two contend in one line: a GUID prefix that lets a client find its
// own node after a lost reply, then the sequence.
const ProtectedSequentialChild = `^_c_[0-9a-f]{32}-lock-[0-9]{10}$`
