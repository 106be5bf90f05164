package conformance

import "testing"

func runServerSide(t *testing.T, e *env) {}
