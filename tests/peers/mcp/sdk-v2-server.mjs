#!/usr/bin/env node
// A dual-era MCP server on the v2 TypeScript SDK (@modelcontextprotocol/server
// 2.4.0, serveStdio): it answers server/discover (2026-07-28) and also the
// legacy initialize handshake. tests/drift_mcp_client.rs lists it to check
// vouch's modern era against an SDK peer rather than only against its own
// test server.
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

serveStdio(() => {
  const server = new McpServer({ name: 'vouch-sdk-v2-test-server', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Echo the text back unchanged.',
      inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
    },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'add',
    {
      title: 'Add two numbers',
      description: 'Add two numbers and return the sum.',
      inputSchema: fromJsonSchema({
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number', default: 0.5 } },
        required: ['a'],
      }),
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + (b ?? 0.5)) }] }),
  );
  server.registerTool(
    'set_mode',
    {
      description: 'Set the mode of the server.',
      inputSchema: fromJsonSchema({
        type: 'object',
        properties: { mode: { type: 'string', enum: ['fast', 'safe'] } },
        required: ['mode'],
      }),
    },
    async () => ({ content: [{ type: 'text', text: 'ok' }] }),
  );
  server.registerPrompt('greet', { description: 'Greet the user.' }, async () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'Hello' } }],
  }));
  server.registerResource('readme', 'test://readme', { description: 'A readme', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: 'readme' }],
  }));
  return server;
});
