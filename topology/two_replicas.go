package topology

// The database replica topologies with a second replica, for the fault
// that loses the replica that acknowledged (nemesis/acked_standby.go):
// PostgreSQL's quorum commit (synchronous_standby_names ANY 1) and
// MariaDB's semi-synchronous replication each return a commit once ONE
// replica has it, and do not say which; a fail-over that loses that
// replica with the primary promotes one that may lack the commit. With
// the one replica of pg-replica-sync and mysql-replica-semisync the
// replica promoted is always the one that acknowledged, so they cannot
// show it.
//
// Declared as topologies of their own, not as a replica count on the
// one-replica ones: the primary's settings differ (PostgreSQL names the
// quorum, ANY 1, where pg-replica-sync's '*' is FIRST 1), a run's
// servers are data a reader finds beside the others, and the one-replica
// topologies' cells stay what they were. The replica the lab promotes
// keeps its name (postgres-replica, mysql-replica: cluster.Promoter's
// PromotedReplica), so every promotion fault means the same here; the
// second one is named -2.
const (
	PGReplicaSync2Name        = "pg-replica-sync-2"
	MySQLReplicaSemisync2Name = "mysql-replica-semisync-2"
	// PGSecondReplicaName and MySQLSecondReplicaName are the second
	// replica's node names.
	PGSecondReplicaName    = PGReplicaName + "-2"
	MySQLSecondReplicaName = MySQLReplicaName + "-2"
)

func init() {
	Register(Named{
		Name: PGReplicaSync2Name,
		Summary: "a PostgreSQL primary and two streaming replicas of it, a quorum of one synchronous (synchronous_standby_names " +
			"'ANY 1 (*)', synchronous_commit on: a commit returns once either replica has flushed it, whichever it was); clients " +
			"are given the primary; on hosts of their own when the faults need them; local servers only",
		// A commit waits for the first of two standbys' flush where
		// pg-replica-sync's waits for its one: the same path.
		SameRequestsAs: PGReplicaSyncName,
		Kinds:          []Kind{Postgres},
		Declare: func(need Need) (Declaration, error) {
			// Only the primary waits for a standby, as on pg-replica-sync.
			d, err := pgWithReplica(need, map[string]string{
				"synchronous_standby_names": "ANY 1 (*)",
				"synchronous_commit":        "on",
			})
			if err != nil {
				return d, err
			}
			d.Groups = append(d.Groups, Group{Name: PGSecondReplicaName, Kind: Postgres, Role: Replica, ReplicaOf: d.Groups[0].Name})
			return d, nil
		},
	})
	Register(Named{
		Name: MySQLReplicaSemisync2Name,
		Summary: "a MySQL (MariaDB) primary and two semi-synchronous replicas of it (as mysql-replica-semisync, with a second " +
			"replica: MariaDB's primary returns a commit once ONE replica has written it to its relay log, whichever it was, and has no " +
			"setting to wait for more); clients are given the primary; on hosts of their own when the faults need them; local servers only",
		// A commit waits for the first of two acknowledgements where
		// mysql-replica-semisync's waits for its one: the same path.
		SameRequestsAs: MySQLReplicaSemisyncName,
		Kinds:          []Kind{MySQL},
		Declare: func(need Need) (Declaration, error) {
			d, err := Lookup(MySQLReplicaSemisyncName)
			if err != nil {
				return Declaration{}, err
			}
			decl, err := d.Declare(need)
			if err != nil {
				return decl, err
			}
			first, _ := decl.Group(MySQLReplicaName)
			second := first
			second.Name = MySQLSecondReplicaName
			second.Settings = map[string]string{}
			for k, v := range first.Settings {
				second.Settings[k] = v
			}
			// A replica skips the events carrying its own server id.
			second.Settings["server_id"] = "3"
			decl.Groups = append(decl.Groups, second)
			return decl, nil
		},
	})
}
