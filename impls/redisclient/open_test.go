package redisclient

import (
	"fmt"
	"testing"
	"time"

	"github.com/locklab/locklab/topology"
)

// Open gives each shape of endpoint the client that reaches it, and the
// cluster client keeps New's promises: no command resent after a lost
// reply, and a slot map fresh within a read timeout.
func TestOpen(t *testing.T) {
	tests := []struct {
		ep      topology.Endpoint
		want    string
		wantErr bool
	}{
		{topology.Endpoint{Kind: topology.Redis, Addrs: []string{"127.0.0.1:1"}}, "*redis.Client", false},
		{topology.Endpoint{Kind: topology.Redis, Via: "sentinel", Master: "m", Addrs: []string{"127.0.0.1:1"}}, "*redis.Client", false},
		{topology.Endpoint{Kind: topology.Redis, Via: "sentinel", Addrs: []string{"127.0.0.1:1"}}, "", true},
		{topology.Endpoint{Kind: topology.Redis, Via: "cluster", Addrs: []string{"127.0.0.1:1", "127.0.0.1:2"}}, "*redis.ClusterClient", false},
		{topology.Endpoint{Kind: topology.Redis, Via: "proxy", Addrs: []string{"127.0.0.1:1"}}, "", true},
		{topology.Endpoint{Kind: topology.Redis}, "", true},
	}
	for _, tt := range tests {
		rdb, err := Open(tt.ep, time.Second, nil)
		if (err != nil) != tt.wantErr {
			t.Errorf("Open(%+v): error %v, want error %v", tt.ep, err, tt.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if got := fmt.Sprintf("%T", rdb); got != tt.want {
			t.Errorf("Open(%+v) = %s, want %s", tt.ep, got, tt.want)
		}
		rdb.Close()
	}
	o := clusterOptions([]string{"127.0.0.1:1"}, Options("127.0.0.1:1", time.Second))
	if o.MaxRedirects != -1 || o.MaxRetries != -1 || o.ClusterStateReloadInterval != 250*time.Millisecond || o.ReadTimeout != 250*time.Millisecond {
		t.Errorf("cluster options: redirects %d, retries %d, reload every %v, read timeout %v; want -1, -1, 250ms, 250ms",
			o.MaxRedirects, o.MaxRetries, o.ClusterStateReloadInterval, o.ReadTimeout)
	}
}
