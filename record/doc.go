// Package record holds the rows every long command writes and every
// renderer reads: a matrix cell's result, a mutant's, an explore row. It
// sits below everything that runs (it imports only the checker's verdicts
// and the topology names), so that the report site, which renders JSON,
// links none of the servers' clients that the commands producing the rows
// need.
package record
