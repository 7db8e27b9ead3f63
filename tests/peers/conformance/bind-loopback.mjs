// Preloaded into the bridge (`node --import ./bind-loopback.mjs
// node_modules/supergateway/dist/index.js ... --port 0`): supergateway has
// no option for the address it listens on and binds every interface, so
// every listen() on a bare port is pointed at 127.0.0.1; and since port 0
// makes the system choose, the port actually bound is announced on stderr
// as one line `vouch-bridge-listening PORT` for the test to read.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const bare = typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]));
  if (bare && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  this.once('listening', () => {
    const a = this.address();
    if (a && typeof a === 'object') process.stderr.write(`vouch-bridge-listening ${a.port}\n`);
  });
  return listen.apply(this, args);
};
