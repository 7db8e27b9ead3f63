// Preloaded into the bridge (`node --import ./prespawn.mjs ...`): keeps one
// child started in reserve, so that a request does not wait for a process
// to start.
//
// supergateway starts a child (`sh -c CMD`) per 2026-07-28 request and per
// legacy session. Some 2026-07-28 scenarios (`server-stateless`) want a
// tool's first frame within 500-600 ms of the request, and starting Node
// with an SDK alone takes 150-400 ms on a loaded 2-core machine: the
// scenario would then measure the machine, not the server. With a child in
// reserve, a request is served by a child that has already started and
// waits, untouched, for its first message on stdin; a new one is started
// in its place at once.
//
// The reserve is owned like any other child (`OwnedChildProcesses.own`):
// when the bridge stops, it is stopped with SIGTERM to its process group
// and waited for, as every other child is. A child that has exited while
// in reserve is not handed out.
import cp from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { OwnedChildProcesses } from './node_modules/supergateway/dist/lib/ownedChildProcesses.js';

const realSpawn = cp.spawn;
/** The owner (an OwnedChildProcesses) of each spawnOptions object. */
const owners = new WeakMap();
/** The command each child was started with. */
const commands = new WeakMap();
/** The reserve of each owner: { cmd, child }. */
const reserves = new WeakMap();

const alive = (child) => child.exitCode === null && child.signalCode === null && child.pid !== undefined;

cp.spawn = function (cmd, opts, ...rest) {
  const owner = opts && owners.get(opts);
  let reserve = owner && reserves.get(owner);
  if (reserve && !alive(reserve.child)) {
    reserves.delete(owner);
    reserve = undefined;
  }
  if (reserve && rest.length === 0 && reserve.cmd === cmd && alive(reserve.child)) {
    reserves.delete(owner);
    setImmediate(() => refill(owner, cmd));
    return reserve.child;
  }
  const child = realSpawn.call(this, cmd, opts, ...rest);
  if (typeof cmd === 'string') commands.set(child, cmd);
  return child;
};
syncBuiltinESMExports();

const own = OwnedChildProcesses.prototype.own;

function refill(owner, cmd) {
  if (owner.closing || reserves.has(owner)) return;
  const child = realSpawn(cmd, owner.spawnOptions);
  reserves.set(owner, { cmd, child });
  own.call(owner, child);
}

OwnedChildProcesses.prototype.own = function (child) {
  const stop = own.call(this, child);
  owners.set(this.spawnOptions, this);
  const cmd = commands.get(child);
  if (cmd !== undefined) setImmediate(() => refill(this, cmd));
  return stop;
};
