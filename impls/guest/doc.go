// Package guest runs locks written in other languages (guests) through the
// worker protocol of docs/guests/protocol.md: the lab starts the guest's
// command as a child of the process that holds the Locker (a worker, so the
// guest shares its process group and network namespace and every client
// fault reaches the guest library too), speaks line-delimited JSON with it,
// and turns its answers into impls' leases and errors. Every guest found in
// the repository's guests/ folder is registered as "guest:NAME".
package guest
