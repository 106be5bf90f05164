package scenarios

import (
	"github.com/locklab/locklab/impls"
)

// Expectation is the verdict a scenario should reach for a lock, and why.
type Expectation struct {
	Verdict Verdict
	Why     string
}

// Expect returns what the lab expects of spec under scenario (with fencing
// or not), derived from the lock's declared properties so that every cell
// of the matrix has an expectation with a reason. The matrix test asserts
// it; `bench matrix` prints it beside what was measured.
func Expect(spec impls.Spec, scenario string, fencing bool) Expectation {
	fenced := fencing && spec.Caps.Fencing
	if spec.Name == "none" {
		return Expectation{Unsafe, "no lock at all: critical sections overlap under any load"}
	}
	switch scenario {
	case "contention":
		return Expectation{Safe, "no fault: a lock that excludes at all excludes here"}
	case "holder-crash":
		if !spec.Caps.Expiry && spec.Name == "pg-unique-insert" {
			return Expectation{Stuck, "the crashed holder's row never expires: everyone else is locked out"}
		}
		return Expectation{Safe, "the dead holder writes nothing more; the lock frees by TTL, session or connection end"}
	case "crash-after-setnx":
		if spec.Name == "redis-setnx-expire" {
			return Expectation{Stuck, "the key was set but its expiry never was: the lock never frees"}
		}
		return Expectation{Safe, "the grant and its expiry are one command, so the lock frees after the TTL"}
	case "pause-past-ttl", "coupon":
		if !spec.Caps.Expiry {
			return Expectation{Safe, "the lock never expires under a paused holder (connection or row stays)"}
		}
		if fenced {
			return Expectation{Safe, "the lease expired during the pause, but the resource refuses the stale token"}
		}
		return Expectation{Unsafe, "the lease (or session) expired during the pause; another client took the lock and the paused one wrote anyway"}
	case "slow-work-past-ttl":
		switch {
		case spec.Name == "redis-getset":
			return Expectation{Unsafe, "the slow holder sees its time is up and skips its write, but its plain-DEL release then deletes the next holder's lock"}
		case !spec.Caps.Expiry:
			return Expectation{Safe, "the lock does not expire while its holder lives"}
		case spec.Caps.Renewal:
			return Expectation{Safe, "the live holder keeps its lock (watchdog renewal or session heartbeats)"}
		case spec.Caps.Validity:
			return Expectation{Safe, "the client sees its validity time has passed and does not write"}
		case fenced:
			return Expectation{Safe, "the lease expired under the slow holder, but the resource refuses its stale token"}
		default:
			return Expectation{Unsafe, "the lease expired under the slow holder; another client took the lock while it still worked"}
		}
	case "late-release":
		switch spec.Name {
		case "redis-del-release", "redis-get-del-release":
			if fenced {
				return Expectation{Safe, "the stale release frees another holder's lock, but the resource refuses the older of the two tokens"}
			}
			return Expectation{Unsafe, "the stale holder's release deletes the next holder's lock, letting a third client in"}
		case "redis-getset":
			return Expectation{Unsafe, "release is a plain DEL: the stale holder deletes the next holder's lock"}
		}
		return Expectation{Safe, "release is owner-checked in one step: a stale release frees nothing"}
	case "client-clock-skew":
		if spec.Name == "redis-getset" {
			return Expectation{Unsafe, "the client whose clock runs ahead judges a live lock expired and takes it over"}
		}
		return Expectation{Safe, "expiry is judged by the server, not by the clients' clocks"}
	case "server-restart", "redis-failover":
		if fenced {
			return Expectation{Unsafe, "the fence counter was lost with the lock: the new server issues the stale holder's token number again, and an equal token passes the resource"}
		}
		return Expectation{Unsafe, "the lock lived only in the lost server state: another client was granted it while the holder still worked"}
	case "redlock-restart", "redlock-clock-jump":
		return Expectation{Unsafe, "the holder's bare majority lost a node's key, so another client won a majority of its own"}
	case "redlock-restart-delayed":
		return Expectation{Safe, "the crashed node comes back only after every key it held has expired"}
	case "redlock-partition":
		return Expectation{Unavailable, "a minority cut leaves a quorum (available); a majority cut leaves none (no grants, never unsafe)"}
	}
	return Expectation{Unknown, "no expectation written for this scenario"}
}
