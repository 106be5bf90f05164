//go:build mutants

package redisfair

import (
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls/mutant"
)

// mutantReleaseUncheckedScript is releaseScript without its owner check,
// live only under its mutant (package mutant): a late release hands the
// lock on (or deletes it) while another client holds it.
var mutantReleaseUncheckedScript = redis.NewScript(queueLua + `
local handed = handoff()
if type(handed) == 'table' then
  return handed
end
if not handed then
  redis.call('DEL', KEYS[1])
end
return 1
`)

// releaseScriptNow is the release script, or the mutant's.
func releaseScriptNow() *redis.Script {
	if mutant.On(mutant.FairReleaseUnchecked) {
		return mutantReleaseUncheckedScript
	}
	return releaseScript
}
