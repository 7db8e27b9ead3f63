#!/usr/bin/env node
// An MCP client on the v2 TypeScript SDK (@modelcontextprotocol/client 2.4.0,
// dual-era) that runs a scripted session against a stdio server and prints
// what it saw as one JSON document. With the default negotiation ("auto") it
// probes server/discover first and falls back to initialize when the answer
// is not a DiscoverResult (an error, a close or a probe timeout), so the wrap
// tests can check both eras through `vouch wrap` and, with connectMs, that
// the wrapper neither delays nor swallows the probe.
//
//   node sdk-v2-client.mjs SCRIPT.json -- COMMAND ARGS...
//
// SCRIPT.json: the keys of sdk-client.mjs (capabilities, elicitation, roots,
// connectTimeoutMs, closeTimeoutMs, maxBufferSize, steps), plus:
//   negotiation    "auto" (default) | "legacy" | "2026-07-28" (a pinned version)
//   probe          "sibling" (default: the SDK probes on a short-lived second
//                  spawn of COMMAND, its stderr discarded, then spawns the
//                  session process) | "inplace" (a transport subclass, so the
//                  probe and the session share one process)
//   probeTimeoutMs the probe's timeout (SDK default: the request timeout, 60 s)
// call_task is not supported (tasks moved to an extension in 2026-07-28; the
// v2 client has no tasks stream): the step fails with an error saying so. In
// the modern era the SDK answers input_required results itself (MRTR) through
// the same elicitation/roots handlers, so elicitations are recorded in both eras.
//
// Output: sdk-client.mjs's document plus era ("modern" | "legacy"),
// probe, negotiation and discover (the DiscoverResult, modern only).
// connectMs includes the sibling probe's spawn and teardown in "sibling" mode.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { answerElicitation, answerRoots, capabilitiesOf, childEnv, log, newState, parseArgs, runScript, watchChild } from './client-common.mjs';

const TAG = 'sdk-v2-client';
const { script, command, args } = parseArgs(TAG);
const state = newState(TAG);

// The SDK clones exactly its own StdioClientTransport for the sibling probe;
// any subclass is probed in place (client readStdioServerParams in dist).
class InPlaceStdioTransport extends StdioClientTransport {}

const negotiation = script.negotiation ?? 'auto';
const probe = script.probe ?? 'sibling';
const mode = negotiation === 'auto' || negotiation === 'legacy' ? negotiation : { pin: String(negotiation) };
const versionNegotiation = { mode };
if (script.probeTimeoutMs) versionNegotiation.probe = { timeoutMs: script.probeTimeoutMs };

const Transport = probe === 'inplace' ? InPlaceStdioTransport : StdioClientTransport;
const transport = new Transport({
  command,
  args,
  env: childEnv(),
  stderr: 'inherit',
  ...(script.maxBufferSize ? { maxBufferSize: script.maxBufferSize } : {}),
});
const client = new Client(
  { name: 'vouch-sdk-v2-test-client', version: '1.0.0' },
  { capabilities: capabilitiesOf(script), versionNegotiation },
);

if (script.elicitation != null) {
  client.setRequestHandler('elicitation/create', async (request) => answerElicitation(script, state, request.params));
}
if (Array.isArray(script.roots)) {
  client.setRequestHandler('roots/list', async () => answerRoots(script, state));
}
client.fallbackNotificationHandler = async (n) => {
  state.notifications.push({ method: n.method, params: n.params ?? null });
};
client.onerror = (e) => {
  state.transportErrors.push(String(e?.message ?? e));
  log(TAG, `client error: ${e?.message ?? e}`);
};

const requestOptions = ({ timeoutMs, signal } = {}) => ({
  ...(timeoutMs ? { timeout: timeoutMs } : {}),
  ...(signal ? { signal } : {}),
});

const adapter = {
  aggregatesPages: true,
  async connect() {
    await client.connect(transport, script.connectTimeoutMs ? { timeout: script.connectTimeoutMs } : undefined);
    watchChild(transport, state);
  },
  async list(kind, cursor) {
    // Without a cursor the v2 client walks every page itself and returns
    // the aggregate (no nextCursor), as a real v2 host would see it; the
    // explicit-cursor form (raw page) is only reached if a server's
    // aggregate still carried a nextCursor.
    const params = cursor === undefined ? {} : { cursor };
    const opts = { cacheMode: 'bypass' };
    switch (kind) {
      case 'tools':
        return cursor === undefined ? client.listTools(undefined, { cacheMode: 'refresh' }) : client.listTools(params, opts);
      case 'prompts':
        return cursor === undefined ? client.listPrompts(undefined, { cacheMode: 'refresh' }) : client.listPrompts(params, opts);
      case 'resources':
        return cursor === undefined ? client.listResources(undefined, { cacheMode: 'refresh' }) : client.listResources(params, opts);
      case 'resourceTemplates':
        return cursor === undefined
          ? client.listResourceTemplates(undefined, { cacheMode: 'refresh' })
          : client.listResourceTemplates(params, opts);
    }
    throw new Error(`unknown list ${kind}`);
  },
  call: (params, opts) => client.callTool(params, requestOptions(opts)),
  async callTask() {
    throw Object.assign(new Error('call_task is not supported by the v2 client (no tasks stream in @modelcontextprotocol/client 2.4.0)'), {
      code: 'unsupported',
    });
  },
  ping: () => client.ping(),
  readResource: (uri) => client.readResource({ uri }, { cacheMode: 'bypass' }),
  close: () => client.close(),
};

await runScript({
  tag: TAG,
  script,
  adapter,
  state,
  describe: () => ({
    era: client.getProtocolEra() ?? null,
    protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
    negotiation,
    probe,
    serverVersion: client.getServerVersion() ?? null,
    serverCapabilities: client.getServerCapabilities() ?? null,
    instructions: client.getInstructions() ?? null,
    discover: client.getDiscoverResult() ?? null,
  }),
});
