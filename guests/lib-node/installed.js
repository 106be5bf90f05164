// Refuses to start a Node.js guest whose npm packages are not installed, or
// were installed before its package-lock.json last changed: it would run
// the old versions (or stop at a require with Node's own message). The test
// is npm-install.sh's own (node_modules/.locklab-installed newer than
// package-lock.json), and the message names the command that installs
// them. A guest requires this first, before any package of its own.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

function mtime(p) {
  try {
    return fs.statSync(p).mtimeMs;
  } catch {
    return -1;
  }
}

// staleness says why the npm packages in dir are not the ones its
// package-lock.json pins, or '' when they are.
function staleness(dir) {
  const stamp = mtime(path.join(dir, 'node_modules', '.locklab-installed'));
  if (stamp < 0) {
    return 'its npm packages are not installed';
  }
  if (mtime(path.join(dir, 'package-lock.json')) >= stamp) {
    return 'its package-lock.json changed after its npm packages were installed';
  }
  return '';
}

// orExit ends the process, saying why and what to run, when the guest in
// dir has stale npm packages.
function orExit(dir) {
  const why = staleness(dir);
  if (why) {
    const name = path.basename(dir);
    process.stderr.write(`guest ${name}: ${why}: run scripts/setup.sh (or guests/${name}/install.sh)\n`);
    process.exit(1);
  }
}

module.exports = { staleness, orExit };
