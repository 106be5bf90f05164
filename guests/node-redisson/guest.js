// node-redisson (npm `node-redisson` 1.0.4) as a locklab guest: Redisson's
// own lock scripts (a hash of holder -> hold count, so the lock is
// reentrant), its watchdog (renews the lease every third of it while the
// holder lives) and its unlock notification (a waiter sleeps on a Pub/Sub
// channel until the holder publishes or the holder's TTL runs out).
//
// One guest process is one Redisson client with one fixed client id, as one
// Java thread is to Redisson: a second acquire of a key this guest holds is
// a reentrant grant, released by its own release. The watchdog's lease is
// the lab's TTL (lockWatchdogTimeout); the lab's refresh runs the watchdog's
// own renewal script once.
'use strict';

// First: the packages below must be the ones package-lock.json pins.
require('../lib-node/installed.js').orExit(__dirname);

const { randomUUID } = require('node:crypto');
const { Redisson } = require('node-redisson');
const { RedissonLockError } = require('node-redisson/dist/errors/RedissonLockError');
const { serve, GuestError, hostPort, ready } = require('../lib-node/protocol.js');

let redisson;
const clientId = randomUUID();
const leases = new Map(); // lease id -> the library's RLock
let seq = 0;

// classify turns a library failure into the protocol's kinds: an error
// the server replied (a script on a key of another type) had no effect;
// anything else (a timeout, a closed connection) may have.
function classify(e) {
  if (e instanceof GuestError) return e;
  if (e && e.name === 'ReplyError') return new GuestError('backend', e.message);
  return new GuestError('unknown', e && e.message ? e.message : String(e));
}

function grant(lock) {
  seq += 1;
  const id = `L${seq}`;
  leases.set(id, lock);
  return { lease: id };
}

// WAIT_SLICE bounds one library wait, so a cancel is answered within it
// (the lab allows 5 s); within a slice the library's own waiter sleeps on the
// unlock channel until the holder's TTL would run out. A shorter slice adds
// a grant attempt per slice: at 1 s the waiter sent 16 requests in 4 s.
const WAIT_SLICE = 3000;

serve({
  async hello(config) {
    const ttl = config.ttl_ms;
    redisson = new Redisson({
      redis: {
        options: {
          ...hostPort(config.servers.redis[0]),
          connectTimeout: Math.max(100, ttl / 2),
          commandTimeout: Math.max(100, ttl / 2),
          maxRetriesPerRequest: 0,
          retryStrategy: () => 50,
        },
      },
      lockWatchdogTimeout: BigInt(ttl),
    });
    // Connected before the first grant, so its first request does not
    // spend its timeout waiting in the library's offline queue.
    await ready([redisson.redis, redisson.commandExecutor.subscribeRedis], 10000);
    return {
      name: 'node-redisson', version: require('node-redisson/package.json').version, protocol: 1,
      capabilities: { reentrant: true, renewal: true, nopolling: true, expiry: true },
    };
  },

  async tryAcquire(req) {
    const lock = redisson.getLock(req.key, clientId);
    let ok;
    try {
      ok = await lock.tryLock(0);
    } catch (e) {
      throw classify(e);
    }
    if (!ok) throw new GuestError('held', 'held by another client');
    return grant(lock);
  },

  async acquire(req, signal) {
    const lock = redisson.getLock(req.key, clientId);
    const end = req.timeout_ms ? Date.now() + req.timeout_ms : Infinity;
    for (;;) {
      const left = end - Date.now();
      if (signal.aborted || left <= 0) throw new GuestError('timeout', 'not granted in time');
      let ok;
      try {
        ok = await lock.tryLock(Math.min(left, WAIT_SLICE));
      } catch (e) {
        throw classify(e);
      }
      if (ok) return grant(lock);
    }
  },

  async refresh(req) {
    const lock = leases.get(req.lease);
    if (!lock) throw new GuestError('lost', `no lease ${req.lease}`);
    let renewed;
    try {
      renewed = await redisson.redis.rRenewExpiration(lock.name, lock.internalLockLeaseTime, lock.getClientName(clientId));
    } catch (e) {
      throw classify(e);
    }
    if (!renewed) throw new GuestError('lost', 'the lock is no longer held by this client');
    return {};
  },

  async release(req) {
    const lock = leases.get(req.lease);
    if (!lock) throw new GuestError('lost', `no lease ${req.lease}`);
    leases.delete(req.lease);
    try {
      await lock.unlock();
    } catch (e) {
      if (e instanceof RedissonLockError) throw new GuestError('lost', e.message);
      throw classify(e);
    }
    return {};
  },

  async close() {
    if (redisson) await redisson.quit();
  },
});
