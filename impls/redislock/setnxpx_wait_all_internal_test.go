package redislock

import "testing"

// How many replicas the lock waits for, read off INFO replication as
// Redis 7 writes it: every replica the master counts, at least one, and
// none confirmed by a server that is no longer a master.
func TestParseConnectedReplicas(t *testing.T) {
	tests := []struct {
		name    string
		info    string
		want    int64
		wantErr bool
	}{
		{"two replicas", "# Replication\r\nrole:master\r\nconnected_slaves:2\r\nslave0:ip=10.0.0.3,port=6379,state=online,offset=42,lag=0\r\n", 2, false},
		{"one left", "# Replication\r\nrole:master\r\nconnected_slaves:1\r\n", 1, false},
		{"none counted: still one", "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n", 1, false},
		{"demoted", "# Replication\r\nrole:slave\r\nmaster_host:10.0.0.4\r\nconnected_slaves:0\r\n", 0, true},
		{"no count", "# Replication\r\nrole:master\r\n", 0, true},
		{"garbled count", "# Replication\r\nrole:master\r\nconnected_slaves:x\r\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConnectedReplicas(tt.info)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseConnectedReplicas = %d, %v; want %d, error %t", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
