package nemesis

import "testing"

// TestPromotionsEndASchedule: every kind that replaces the master or the
// primary by its replica for good, leaving the old one dead or cut off,
// is a Promoter, so a drawn schedule ends with it and Validate refuses a
// fault after it. primary-promotion was not, and explore drew it twice.
func TestPromotionsEndASchedule(t *testing.T) {
	for _, kind := range []string{FailOver, ReplicaPromote, PrimaryPromotion, LaggingPromotion, PrimarySplitWithClients, AckedStandbyLost} {
		t.Run(kind, func(t *testing.T) {
			if _, err := Lookup(kind); err != nil {
				t.Fatal(err)
			}
			if !promotes(kind) {
				t.Errorf("%s replaces the old primary for good but is no Promoter: a drawn schedule goes on after it", kind)
			}
		})
	}
}
