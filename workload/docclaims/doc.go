// Package docclaims measures, on real servers the caller started, the
// claims of the source documents that no fault scenario checks: Redlock's
// split votes and its random back-off, its acquire with nodes of five
// stalled, a slow Lua script blocking every other client of its Redis, a
// waiting budget of half the TTL under contention, and how long ZooKeeper
// keeps a dead client's ephemeral node. Each measurement records raw
// samples; what a page reads from them is computed by the page.
package docclaims
