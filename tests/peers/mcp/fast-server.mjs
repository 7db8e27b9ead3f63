#!/usr/bin/env node
// The fastest legacy MCP stdio server we can write in Node, for latency
// benchmarks of `vouch wrap` (bench-client.mjs measures direct vs wrapped):
// no SDK, no validation beyond JSON.parse, answers written as soon as the
// line is read.
//
//   node fast-server.mjs
//
// initialize (echoes a 2025 protocolVersion, else 2025-11-25), ping,
// tools/list with one tool `echo`, tools/call echo →
// {"content":[{"type":"text","text":<arguments.text>}]}; other requests get
// -32601, notifications are ignored. Exits 0 on stdin EOF.
const LEGACY = ['2025-11-25', '2025-06-18', '2025-03-26'];
const TOOLS = JSON.stringify({
  tools: [
    {
      name: 'echo',
      description: 'Echo the text back unchanged.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
  ],
});

function answer(line) {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n';
  }
  if (msg === null || typeof msg !== 'object' || msg.id === undefined || typeof msg.method !== 'string') return '';
  const id = JSON.stringify(msg.id);
  switch (msg.method) {
    case 'tools/call': {
      const text = msg.params?.arguments?.text;
      return `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":${JSON.stringify(typeof text === 'string' ? text : String(text))}}]}}\n`;
    }
    case 'tools/list':
      return `{"jsonrpc":"2.0","id":${id},"result":${TOOLS}}\n`;
    case 'initialize': {
      const v = msg.params?.protocolVersion;
      return `{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":${JSON.stringify(LEGACY.includes(v) ? v : LEGACY[0])},"capabilities":{"tools":{}},"serverInfo":{"name":"vouch-fast-test-server","version":"1.0.0"}}}\n`;
    }
    case 'ping':
      return `{"jsonrpc":"2.0","id":${id},"result":{}}\n`;
    default:
      return `{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"Method not found"}}\n`;
  }
}

let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  let out = '';
  let start = 0;
  let nl;
  while ((nl = buf.indexOf('\n', start)) >= 0) {
    const line = buf.slice(start, nl);
    start = nl + 1;
    if (line.length > 1 || (line.length === 1 && line !== '\r')) out += answer(line);
  }
  buf = start ? buf.slice(start) : buf;
  // One write per chunk: all answers to the lines of this chunk at once.
  if (out) process.stdout.write(out);
});
process.stdin.on('end', () => process.stdout.write('', () => process.exit(0)));
