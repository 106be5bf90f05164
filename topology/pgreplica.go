package topology

// PostgreSQL with a streaming replica, as people run it to fail over: the
// primary (named postgres, as a single PostgreSQL is, so a schedule aimed
// at the first server means the same) and a replica made from a base
// backup of it that follows its WAL. Clients are given the primary only;
// a fail-over promotes the replica and moves the primary's address to it.
const (
	PGReplicaAsyncName = "pg-replica-async"
	PGReplicaSyncName  = "pg-replica-sync"
	// PGReplicaName is the replica's node name.
	PGReplicaName = "postgres-replica"
)

func init() {
	Register(Named{
		Name: PGReplicaAsyncName,
		Summary: "a PostgreSQL primary and a streaming replica of it (pg_basebackup -R, asynchronous: a commit returns " +
			"before the replica has it); clients are given the primary; on hosts of their own when the faults need them; local servers only",
		SameRequestsAs: SingleName,
		Kinds:          []Kind{Postgres},
		Declare: func(need Need) (Declaration, error) {
			return pgWithReplica(need, nil)
		},
	})
	Register(Named{
		Name: PGReplicaSyncName,
		Summary: "a PostgreSQL primary and a synchronous streaming replica of it (synchronous_standby_names '*', " +
			"synchronous_commit on: a commit returns once the replica has flushed it); clients are given the primary; " +
			"on hosts of their own when the faults need them; local servers only",
		Kinds:       []Kind{Postgres},
		CommitWaits: "synchronous_standby_names '*' with synchronous_commit on: a commit returns once the replica has flushed it",
		Declare: func(need Need) (Declaration, error) {
			// Only the primary waits for a standby: the replica, promoted,
			// has none, and with the same settings every commit would wait
			// for ever.
			return pgWithReplica(need, map[string]string{
				"synchronous_standby_names": "*",
				"synchronous_commit":        "on",
			})
		},
	})
}

// pgWithReplica declares the primary, with primarySettings, and its replica.
func pgWithReplica(need Need, primarySettings map[string]string) (Declaration, error) {
	d, err := one(need, Postgres)
	if err != nil {
		return d, err
	}
	d.Groups[0].Settings = primarySettings
	d.Groups = append(d.Groups, Group{Name: PGReplicaName, Kind: Postgres, Role: Replica, ReplicaOf: d.Groups[0].Name})
	return d, nil
}
