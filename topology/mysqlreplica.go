package topology

// MySQL (MariaDB) with a replica, as people run it to fail over: the
// primary (named mysql, as a single MySQL is, so a schedule aimed at the
// first server means the same) writing a binary log, and a replica that
// follows it by GTID (CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos).
// Clients are given the primary only; a fail-over promotes the replica and
// moves the primary's address to it, as on pg-replica-async/-sync.
const (
	MySQLReplicaAsyncName    = "mysql-replica-async"
	MySQLReplicaSemisyncName = "mysql-replica-semisync"
	// MySQLReplicaName is the replica's node name.
	MySQLReplicaName = "mysql-replica"
)

// MySQLSemisyncTimeout is how long (in ms) the semi-synchronous primary
// waits for its replica's acknowledgement of a commit. When it passes with
// no acknowledgement, MariaDB does not fail the commit: it returns it,
// switches itself to asynchronous replication (Rpl_semi_sync_master_status
// OFF) and switches back only once a replica has caught up, which nothing
// tells a client. Its default, 10 s, is about as long as a cell's run, so
// a replica slowed on a loaded machine could turn the topology into the
// asynchronous one unseen; an hour is longer than any run: a commit the
// replica does not acknowledge then waits (and the lock's client times
// out) rather than returning unreplicated.
// Its length is the profile's (Profile.Timeouts, Profile.Apply): an hour
// under fast, MariaDB's default 10 s under production, where the primary's
// silent fall-back is part of what the cells measure.
var MySQLSemisyncTimeout = Fast.Timeouts["rpl_semi_sync_master_timeout"]

func init() {
	Register(Named{
		Name: MySQLReplicaAsyncName,
		Summary: "a MySQL (MariaDB) primary writing a binary log and a replica of it following by GTID (asynchronous: a commit " +
			"returns before the replica has it); clients are given the primary; on hosts of their own when the faults need them; local servers only",
		SameRequestsAs: SingleName,
		Kinds:          []Kind{MySQL},
		Declare: func(need Need) (Declaration, error) {
			return mysqlWithReplica(need, nil, nil)
		},
	})
	Register(Named{
		Name: MySQLReplicaSemisyncName,
		Summary: "a MySQL (MariaDB) primary and a semi-synchronous replica of it (rpl_semi_sync_master_enabled, wait point " +
			"AFTER_SYNC, timeout the profile's: an hour under fast, MariaDB's default 10 s under production; a commit returns once the replica has written it to its relay log); clients are given the primary; " +
			"on hosts of their own when the faults need them; local servers only",
		Kinds:       []Kind{MySQL},
		CommitWaits: "semi-synchronous replication (AFTER_SYNC): a commit returns once the replica has written it to its relay log, or once the timeout passes",
		Declare: func(need Need) (Declaration, error) {
			// Only the primary waits for an acknowledgement: the replica,
			// promoted, has no replica of its own.
			return mysqlWithReplica(need, map[string]string{
				"rpl_semi_sync_master_enabled": "ON",
				"rpl_semi_sync_master_timeout": MySQLSemisyncTimeout,
				// AFTER_SYNC (lossless): the commit waits for the
				// acknowledgement before the storage engine commits it, so
				// no other session sees a commit the replica may lack.
				// MariaDB's default, AFTER_COMMIT, lets others see it first.
				"rpl_semi_sync_master_wait_point": "AFTER_SYNC",
				// The primary starts before its replica and writes (the
				// lab's database) before any replica can connect; while no
				// replica is connected it does not wait. Once the replica
				// is (the lab's start waits until the primary says
				// semi-synchronous replication is on), every commit waits
				// for it, up to the timeout above.
				"rpl_semi_sync_master_wait_no_slave": "OFF",
			}, map[string]string{"rpl_semi_sync_slave_enabled": "ON"})
		},
	})
}

// mysqlWithReplica declares the primary and its replica, each with the
// settings an operator's configuration gives it: distinct server ids
// (a replica skips events carrying its own), a binary log on the primary
// in row format (the replica applies the rows the primary wrote, with the
// expiry its clock set, rather than re-running statements), and the
// replica read-only; plus primaryExtra and replicaExtra.
func mysqlWithReplica(need Need, primaryExtra, replicaExtra map[string]string) (Declaration, error) {
	d, err := one(need, MySQL)
	if err != nil {
		return d, err
	}
	primary := map[string]string{"server_id": "1", "log_bin": "mysql-bin", "binlog_format": "ROW"}
	replica := map[string]string{"server_id": "2", "read_only": "ON"}
	for k, v := range primaryExtra {
		primary[k] = v
	}
	for k, v := range replicaExtra {
		replica[k] = v
	}
	d.Groups[0].Settings = primary
	d.Groups = append(d.Groups, Group{Name: MySQLReplicaName, Kind: MySQL, Role: Replica, ReplicaOf: d.Groups[0].Name, Settings: replica})
	return d, nil
}
