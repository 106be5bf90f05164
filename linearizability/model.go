package linearizability

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// CSInput is what a critical section was called with.
type CSInput struct {
	Client int
	Token  uint64 // fencing token, 0 when the lock issues none
	Fenced bool   // the resource checked the token
}

// CSOutput is how a critical section ended.
type CSOutput struct {
	Status    Status
	ReadKnown bool  // the read's reply was seen
	Read      int64 // value read, valid when ReadKnown
	Wrote     int64 // value written, valid when Status is OK
}

// CounterModel is the sequential specification of the protected resource:
// a counter that a critical section reads and sets to what it read plus one.
// Under mutual exclusion every critical section reads the value its
// predecessor wrote; two that overlap both read the same value and one
// increment is lost, which no sequential order explains.
//
// The model is nondeterministic only for unknown outcomes: a critical
// section whose write may or may not have landed leaves the counter either
// unchanged or at read+1. A section refused by fencing or aborted before
// writing leaves it unchanged. With fencing on, a stale writer is refused by
// the resource and so does no harm: the same model then passes.
var CounterModel = porcupine.NondeterministicModel{
	Init: func() []interface{} { return []interface{}{int64(0)} },
	Step: func(state, input, output interface{}) []interface{} {
		v := state.(int64)
		out := output.(CSOutput)
		if out.ReadKnown && out.Read != v {
			return nil
		}
		switch out.Status {
		case OK:
			if out.Wrote != out.Read+1 {
				return nil
			}
			return []interface{}{out.Wrote}
		case Unknown:
			if out.ReadKnown {
				return []interface{}{v, out.Read + 1}
			}
			return []interface{}{v}
		default: // Refused, Aborted
			return []interface{}{v}
		}
	},
	Equal:             func(a, b interface{}) bool { return a.(int64) == b.(int64) },
	DescribeOperation: describe,
	DescribeState:     func(s interface{}) string { return fmt.Sprintf("counter = %d", s.(int64)) },
}

func describe(input, output interface{}) string {
	in := input.(CSInput)
	out := output.(CSOutput)
	tok := ""
	if in.Token != 0 {
		tok = fmt.Sprintf(" token %d", in.Token)
		if in.Fenced {
			tok += " (fenced)"
		}
	}
	read := "read ?"
	if out.ReadKnown {
		read = fmt.Sprintf("read %d", out.Read)
	}
	switch out.Status {
	case OK:
		return fmt.Sprintf("client %d%s: %s, wrote %d", in.Client, tok, read, out.Wrote)
	case Refused:
		return fmt.Sprintf("client %d%s: %s, REFUSED (stale token)", in.Client, tok, read)
	case Aborted:
		return fmt.Sprintf("client %d%s: %s, aborted, no write", in.Client, tok, read)
	default:
		return fmt.Sprintf("client %d%s: %s, write UNKNOWN", in.Client, tok, read)
	}
}

// Operations pairs each critical section's call with its read and return.
// A section with no return (its client was killed, or it is still running
// at the end) is kept as Unknown and returns at end: it may have taken
// effect at any moment until then.
func Operations(events []Event, end int64) []porcupine.Operation {
	type key struct {
		client int
		op     int64
	}
	type pending struct {
		call, ret int64
		in        CSInput
		out       CSOutput
		done      bool
	}
	byKey := map[key]*pending{}
	var order []key
	for _, e := range events {
		k := key{e.Client, e.Op}
		switch e.Kind {
		case Call:
			byKey[k] = &pending{call: e.Time, in: CSInput{Client: e.Client, Token: e.Token, Fenced: e.Fenced}, out: CSOutput{Status: Unknown}}
			order = append(order, k)
		case Read:
			if p := byKey[k]; p != nil {
				p.out.ReadKnown, p.out.Read = true, e.Value
			}
		case Return:
			if p := byKey[k]; p != nil {
				p.ret, p.done = e.Time, true
				p.out.Status = e.Status
				if e.Status == OK {
					p.out.Wrote = e.Value
				}
			}
		}
	}
	ops := make([]porcupine.Operation, 0, len(order))
	for _, k := range order {
		p := byKey[k]
		ret := p.ret
		if !p.done {
			ret = end
		}
		if ret <= p.call {
			ret = p.call + 1
		}
		ops = append(ops, porcupine.Operation{ClientId: p.in.Client, Input: p.in, Call: p.call, Output: p.out, Return: ret})
	}
	return ops
}
