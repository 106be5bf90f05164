package redisclient_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/locklab/locklab/impls/redisclient"
)

func ExampleOptions() {
	o := redisclient.Options("127.0.0.1:6379", time.Second)
	// A client that blocks in BLPOP keeps every other setting.
	o.ReadTimeout = 2 * time.Second
	fmt.Println(o.MaxRetries, o.DialerRetries, o.WriteTimeout, o.ReadTimeout)
	// Output: -1 1 250ms 2s
}

// A reply is awaited a quarter of the lease, but never less than 50ms nor
// more than a second.
func TestOptionsTimeouts(t *testing.T) {
	tests := []struct {
		ttl, want time.Duration
	}{
		{100 * time.Millisecond, 50 * time.Millisecond},
		{200 * time.Millisecond, 50 * time.Millisecond},
		{time.Second, 250 * time.Millisecond},
		{4 * time.Second, time.Second},
		{30 * time.Second, time.Second},
	}
	for _, tt := range tests {
		o := redisclient.Options("127.0.0.1:6379", tt.ttl)
		if o.ReadTimeout != tt.want || o.WriteTimeout != tt.want {
			t.Errorf("ttl %v: read %v, write %v, want %v", tt.ttl, o.ReadTimeout, o.WriteTimeout, tt.want)
		}
	}
}
