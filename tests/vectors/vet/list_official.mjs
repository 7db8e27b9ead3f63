#!/usr/bin/env node
// Lists the tools (and server instructions) of the official reference
// servers installed under tests/peers/mcp/node_modules, exactly as a client
// sees them, and writes official.json, which make_fixtures.py reads.
//
//   node tests/vectors/vet/list_official.mjs        # from the repository root
//
// Client: @modelcontextprotocol/sdk 1.32.2 (the copy in tests/peers/mcp),
// declaring every capability that server-everything registers conditional
// tools for (roots, sampling, form and URL elicitation, task requests), so
// the listing is the largest one the server gives. server-filesystem gets a
// fresh empty allowed directory (its tool list does not depend on it).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const nm = resolve(here, '../../peers/mcp/node_modules');
const sdk = (p) => import(pathToFileURL(join(nm, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const pkgVersion = (name) =>
  JSON.parse(readFileSync(join(nm, '@modelcontextprotocol', name, 'package.json'), 'utf8')).version;

const capabilities = {
  roots: { listChanged: true },
  sampling: {},
  elicitation: { form: {}, url: {} },
  tasks: { requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
};

async function list(name, args) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(nm, '@modelcontextprotocol', name, 'dist/index.js'), ...args],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'vouch-vet-fixtures', version: '1' }, { capabilities });
  await client.connect(transport);
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  const out = {
    package: `@modelcontextprotocol/${name}@${pkgVersion(name)}`,
    serverInfo: client.getServerVersion(),
    instructions: client.getInstructions() ?? null,
    tools,
  };
  await client.close();
  return out;
}

const allowed = mkdtempSync(join(tmpdir(), 'vouch-vet-allowed-'));
try {
  const servers = [await list('server-everything', []), await list('server-filesystem', [allowed])];
  writeFileSync(join(here, 'official.json'), JSON.stringify({ sdk: '@modelcontextprotocol/sdk@' + pkgVersion('sdk'), servers }, null, 1) + '\n');
  for (const s of servers) console.error(`${s.package}: ${s.tools.length} tools`);
} finally {
  rmSync(allowed, { recursive: true, force: true });
}
