// Package etcdclient is the etcd client both etcd locks of the lab share
// (etcd-lock and the peer etcd's own concurrency.Mutex), so that what
// differs between them is the lock, not the client's settings.
package etcdclient

import (
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// window is the HTTP/2 flow-control window of every stream and of the
// connection. Set, rather than left to gRPC, because a window left to gRPC
// is sized by a bandwidth estimator that pings the server after every
// response it receives: a waiter whose only traffic is its lease's
// keep-alive would send each keep-alive twice over (the request and a
// ping), which is chatter for the server and, to the conformance probe that
// counts what a waiter sends, looks like the start of polling. A lock's
// messages are a few hundred bytes; 1 MiB is gRPC's own ceiling for the
// estimated window, so no transfer the locks make is slowed.
const window = 1 << 20

// Config is the client configuration for the members at addrs; dial bounds
// the first connection.
func Config(addrs []string, dial time.Duration) clientv3.Config {
	return clientv3.Config{
		Endpoints:   addrs,
		DialTimeout: dial,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{
			grpc.WithInitialWindowSize(window),
			grpc.WithInitialConnWindowSize(window),
		},
	}
}
