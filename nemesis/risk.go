package nemesis

import lin "github.com/locklab/locklab/linearizability"

// A kind declares when its fault puts a lock at risk, in the checker's
// terms (lin.RiskAtStrike and the rest), so that a random schedule, which
// no scenario states a rule for, can be judged fault by fault: explore's
// rows say how many of their faults bit. The nemesis only declares; the
// checker judges (it never knows the checker).

// Risker is a kind's declaration of its risk rule for a target it strikes;
// "" declares that the fault puts no lock at risk on its own.
type Risker interface {
	Risk(target string) string
}

// RiskOf is kind's declared rule for target; "" for a kind that declares
// none.
func RiskOf(kind, target string) string {
	if r, ok := kinds[kind].(Risker); ok {
		return r.Risk(target)
	}
	return ""
}

// onClientOrServers is the rule of a fault that can strike either side: a
// client (the holder, a slot, one client's link) is stopped or cut off,
// so its claim is at risk when its lease runs out; servers cut off lose
// their part of the claim when it strikes.
func onClientOrServers(target string) string {
	client, _, link := SplitLink(target)
	if link {
		target = client
	}
	if _, err := ClientSlot(target); err == nil || target == HolderTarget {
		return lin.RiskAtExpiry
	}
	return lin.RiskAtStrike
}

// A crashed client asks whether the lock frees for the others.
func (clientKill) Risk(string) string { return lin.RiskRecovery }

// A stopped, slowed or cut-off holder keeps working past its lease.
func (clientPause) Risk(string) string     { return lin.RiskAtExpiry }
func (clientSlow) Risk(string) string      { return lin.RiskAtExpiry }
func (proxyReset) Risk(string) string      { return lin.RiskAtExpiry }
func (k netKind) Risk(t string) string     { return onClientOrServers(t) }
func (serverPause) Risk(string) string     { return lin.RiskAtExpiry }
func (clientClockSkew) Risk(string) string { return lin.RiskContention }

// Servers that lose, replace or end the holder's claim when they strike.
func (serverKill) Risk(string) string        { return lin.RiskAtStrike }
func (clockJump) Risk(string) string         { return lin.RiskAtStrike }
func (serverEndsSession) Risk(string) string { return lin.RiskAtStrike }

// A replica put in the master's place takes the claim only if it lacked
// the master's writes, which the fault records from the servers.
func (failOver) Risk(string) string          { return lin.RiskAtPromotion }
func (laggingMasterKill) Risk(string) string { return lin.RiskAtPromotion }
func (laggingPromotion) Risk(string) string  { return lin.RiskAtPromotion }
func (ackedStandbyLost) Risk(string) string  { return lin.RiskAtPromotion }
func (primaryPromotion) Risk(string) string  { return lin.RiskAtPromotion }
func (replicaPromote) Risk(string) string    { return lin.RiskAtPromotion }
func (replicaLost) Risk(string) string       { return lin.RiskAtPromotion }
func (splitWithHolder) Risk(string) string   { return lin.RiskAtStrike }
func (splitBrain) Risk(string) string        { return lin.RiskBothSides }
func (primarySplit) Risk(string) string      { return lin.RiskBothSides }
func (nodesCut) Risk(string) string          { return lin.RiskAtStrike }

// A replication stream held back takes nothing from a holder by itself:
// only a fail-over that strikes while it lags does (a schedule pairs them).
func (replicationLag) Risk(string) string { return "" }
