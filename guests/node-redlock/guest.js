// node-redlock (npm `redlock` 4.2.0, its `latest`) as a locklab guest: the
// Redlock algorithm over every Redis server the lab gives (one, or five).
// The library's own defaults are kept (drift factor 0.01, a retry every
// 200 ms ± 100 ms); the wait loop is the library's retry made cancellable:
// one library attempt (retryCount 0) at a time, the library's delay between.
'use strict';

// First: the packages below must be the ones package-lock.json pins.
require('../lib-node/installed.js').orExit(__dirname);

const Redis = require('ioredis');
const Redlock = require('redlock');
const { serve, GuestError, sleep, hostPort, ready } = require('../lib-node/protocol.js');

const RETRY_DELAY = 200;
const RETRY_JITTER = 100;

let clients = [];
let redlock;
let ttl = 1000;
// Requests the library sent whose fate is unknown: a connection failed or
// timed out. A server's error reply (WRONGTYPE) is not one: the server
// answered, and a script that errs has no effect.
let clientErrors = 0;
// Requests ioredis refused to send (notSent), each one server this
// attempt did not reach.
let unsentRequests = 0;
const leases = new Map();
let seq = 0;

// attempt runs one library call and classifies its failure: the library
// says only "no quorum"; if a server failed meanwhile, the request may
// have taken effect there, so the outcome is unknown. A request never sent
// (notSent: its server's connection was down) leaves no such doubt: an
// acquire refused by the servers that answered, with enough of them to
// grant, met the lock ('held'); with too few up to grant at all, it met
// the servers' failure ('backend').
async function attempt(fn, noQuorum) {
  const before = clientErrors;
  const unsentBefore = unsentRequests;
  try {
    return await fn();
  } catch (e) {
    if (e instanceof Redlock.LockError && clientErrors === before) {
      // A server is down if its client says so, or if the request to it
      // was refused unsent: ioredis marks a stream unwritable as its
      // server goes before it moves the client's status off 'ready', and
      // an acquire in that gap, counted by status alone, read as refused
      // by every server ('held') with the only server gone (seen once in
      // a clean-clone make test: ServerGoneGivesBackendFailure).
      const down = Math.max(clients.filter((c) => c.status !== 'ready').length, unsentRequests - unsentBefore);
      if (down === 0) throw new GuestError(noQuorum, e.message);
      const need = Math.floor(clients.length / 2) + 1;
      if (clients.length - down < need) {
        throw new GuestError('backend', `${e.message} (${down} of ${clients.length} servers down, ${need} needed)`);
      }
      if (noQuorum === 'held') {
        throw new GuestError('held', `${e.message} (${down} of ${clients.length} servers down; the others refused)`);
      }
    }
    throw new GuestError('unknown', `${e.message} (server errors meanwhile: ${clientErrors - before})`);
  }
}

// notSent: ioredis, with no offline queue, rejects a request with this
// error before writing it while its connection is down, so the request
// never reached its server and leaves no doubt. Counting it as a failure
// of unknown outcome made every acquire while a node was down "unknown"
// (a crashed node refuses every dial), so none of them counted as a client
// coming for the lock: guest:node-redlock-5 under redlock-restart-delayed
// was exercised in 1 run of 3. A refresh or release that did not reach a
// down server still ends unknown (attempt): it may have taken effect on
// the others.
function notSent(e) {
  return String(e && e.message).startsWith("Stream isn't writeable");
}

function grant(lock) {
  seq += 1;
  const id = `L${seq}`;
  leases.set(id, lock);
  return { lease: id, valid_until_ms: lock.expiration };
}

serve({
  async hello(config) {
    ttl = config.ttl_ms;
    clients = config.servers.redis.map((addr) => {
      const c = new Redis({
        ...hostPort(addr),
        // Timeouts under the TTL, as the lab's own clients have; no queue
        // while disconnected and no hidden retries: a failed request fails.
        connectTimeout: Math.max(100, ttl / 2),
        commandTimeout: Math.max(100, ttl / 2),
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        retryStrategy: () => 50,
      });
      return c;
    });
    // Redlock is granted by a majority: a node cut off from this client
    // before its first grant (the lab's Redlock scenarios cut the victim off
    // a minority) must not keep the guest from starting.
    await ready(clients, 10000, Math.floor(clients.length / 2) + 1);
    redlock = new Redlock(clients, { retryCount: 0, retryDelay: RETRY_DELAY, retryJitter: RETRY_JITTER });
    redlock.on('clientError', (e) => {
      if (notSent(e)) {
        unsentRequests += 1;
        return;
      }
      if (e instanceof Redis.ReplyError) return;
      clientErrors += 1;
    });
    return {
      name: 'redlock', version: require('redlock/package.json').version, protocol: 1,
      capabilities: { expiry: true, validity: true },
    };
  },

  async tryAcquire(req) {
    return grant(await attempt(() => redlock.lock(req.key, ttl), 'held'));
  },

  async acquire(req, signal) {
    const end = req.timeout_ms ? Date.now() + req.timeout_ms : Infinity;
    for (;;) {
      // A cancel ends the wait before another attempt: the sleep below
      // returns at once when aborted, and an attempt after it could be
      // granted to a caller that has gone (and hold the key until the lab
      // gives the late grant back).
      if (signal.aborted) throw new GuestError('timeout', 'not granted in time');
      try {
        return grant(await attempt(() => redlock.lock(req.key, ttl), 'held'));
      } catch (e) {
        if (e.kind !== 'held') throw e;
      }
      const delay = RETRY_DELAY + Math.floor((Math.random() * 2 - 1) * RETRY_JITTER);
      if (signal.aborted || Date.now() + delay > end) {
        throw new GuestError('timeout', 'not granted in time');
      }
      await sleep(delay, signal);
    }
  },

  async refresh(req) {
    const lock = leases.get(req.lease);
    if (!lock) throw new GuestError('lost', `no lease ${req.lease}`);
    await attempt(() => redlock.extend(lock, ttl), 'lost');
    return { valid_until_ms: lock.expiration };
  },

  async release(req) {
    const lock = leases.get(req.lease);
    if (!lock) throw new GuestError('lost', `no lease ${req.lease}`);
    leases.delete(req.lease);
    await attempt(() => redlock.unlock(lock), 'lost');
    return {};
  },

  async close() {
    clients.forEach((c) => c.disconnect());
  },
});
