package netfault

import "testing"

// The rule the lab writes and the line iptables -S prints back for it
// must have one key, or the same cut twice would add a second rule.
func TestRuleKey(t *testing.T) {
	cases := []struct {
		name, wrote, printed string
	}{
		{"drop",
			"-A LOCKLAB -s 10.213.77.3/32 -m comment --comment locklab -j DROP",
			"-A LOCKLAB -s 10.213.77.3/32 -m comment --comment locklab -j DROP"},
		{"loss",
			"-A LOCKLAB -s 10.213.77.3/32 -m statistic --mode random --probability 0.100000 -m comment --comment locklab -j DROP",
			"-A LOCKLAB -s 10.213.77.3/32 -m statistic --mode random --probability 0.10000000009 -m comment --comment locklab -j DROP"},
		{"delay",
			"-A LOCKLAB -s 10.213.77.3/32 -p tcp --sport 6379 -m comment --comment locklab -j NFQUEUE --queue-num 7 --queue-bypass",
			"-A LOCKLAB -s 10.213.77.3/32 -p tcp -m tcp --sport 6379 -m comment --comment locklab -j NFQUEUE --queue-num 7 --queue-bypass"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if w, p := ruleKey(tc.wrote), ruleKey(tc.printed); w == "" || w != p {
				t.Errorf("keys differ:\n wrote   %q\n printed %q", w, p)
			}
		})
	}
	// Other senders, other losses and other chains are other rules.
	base := ruleKey(cases[1].wrote)
	for _, other := range []string{
		"-A LOCKLAB -s 10.213.77.4/32 -m statistic --mode random --probability 0.100000 -m comment --comment locklab -j DROP",
		"-A LOCKLAB -s 10.213.77.3/32 -m statistic --mode random --probability 0.200000 -m comment --comment locklab -j DROP",
		"-A LOCKLAB -s 10.213.77.3/32 -m comment --comment locklab -j DROP",
	} {
		if ruleKey(other) == base {
			t.Errorf("%q has the key of %q", other, cases[1].wrote)
		}
	}
	if k := ruleKey("-A INPUT -m comment --comment locklab -j LOCKLAB"); k != "" {
		t.Errorf("a line of another chain has key %q, want none", k)
	}
}
