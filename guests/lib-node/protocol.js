// The guest protocol (docs/guests/protocol.md, version 1) for Node.js
// guests: read requests from stdin, run each as its own promise, write each
// answer as one line. A guest supplies the handlers; a handler throws a
// GuestError to answer with one of the protocol's error kinds.
'use strict';

const readline = require('node:readline');

class GuestError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

function send(obj) {
  // One write per line: Node.js never interleaves two writes on stdout.
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// sleep resolves after ms, or at once when signal aborts.
function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

// serve runs the protocol over handlers {hello(config), acquire(req, signal),
// tryAcquire(req), refresh(req), release(req), close()}. A waiting acquire
// gets an AbortSignal that a cancel of it aborts.
function serve(handlers) {
  const waits = new Map(); // request id -> AbortController
  const ops = {
    hello: (req) => handlers.hello(req.config),
    acquire: (req) => handlers.acquire(req, waits.get(req.id).signal),
    'try-acquire': (req) => handlers.tryAcquire(req),
    refresh: (req) => handlers.refresh(req),
    release: (req) => handlers.release(req),
    close: async () => { await handlers.close(); return {}; },
  };
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', async (raw) => {
    let req;
    try {
      req = JSON.parse(raw);
    } catch (e) {
      process.stderr.write(`unreadable request: ${raw}\n`);
      return;
    }
    if (req.op === 'cancel') {
      const w = waits.get(req.target);
      if (w) w.abort();
      send({ id: req.id, ok: true });
      return;
    }
    const op = ops[req.op];
    if (!op) {
      send({ id: req.id, ok: false, error: { kind: 'protocol', message: `unknown op ${req.op}` } });
      return;
    }
    waits.set(req.id, new AbortController());
    try {
      const answer = await op(req);
      send({ ...answer, id: req.id, ok: true });
    } catch (e) {
      const kind = e instanceof GuestError ? e.kind : 'unknown';
      send({ id: req.id, ok: false, error: { kind, message: `${e.name}: ${e.message}` } });
    } finally {
      waits.delete(req.id);
    }
  });
  // The lab ends stdin to stop the guest: exit at once, leases unreleased.
  rl.on('close', () => process.exit(0));
}

// lost tells the lab that a lease it holds was lost.
function lost(lease, reason) {
  send({ event: 'lost', lease, reason });
}

// hostPort splits "host:port".
function hostPort(addr) {
  const i = addr.lastIndexOf(':');
  return { host: addr.slice(0, i), port: Number(addr.slice(i + 1)) };
}

// ready resolves when need of the ioredis clients (all of them unless
// said) are connected, and fails as a backend error after ms: a guest
// connects in hello, so its first grant does not spend its timeout in the
// client's offline queue. A lock over independent nodes needs only those it
// can be granted by (Redlock: a majority), and a node its client cannot
// reach at start is a fault the lab may inject before any grant.
function ready(clients, ms, need = clients.length) {
  return new Promise((resolve, reject) => {
    let up = 0;
    const t = setTimeout(() => reject(new GuestError('backend', `${up} of ${clients.length} connected within ${ms} ms, ${need} needed`)), ms);
    for (const c of clients) {
      c.on('error', () => {}); // a failed request reports its own error
      const ok = () => {
        up += 1;
        if (up === need) { clearTimeout(t); resolve(); }
      };
      if (c.status === 'ready') ok();
      else c.once('ready', ok);
    }
  });
}

module.exports = { serve, GuestError, sleep, lost, hostPort, ready };
