#!/usr/bin/env node
// An MCP client on the v1 TypeScript SDK (@modelcontextprotocol/sdk 1.32.2,
// legacy era only: initialize with 2025-11-25) that runs a scripted session
// against a stdio server and prints what it saw as one JSON document. The
// wrap tests run it in front of `vouch wrap -- SERVER` to check that a real
// SDK client works through the wrapper and sees blocked calls as tool errors.
//
//   node sdk-client.mjs SCRIPT.json -- COMMAND ARGS...
//
// SCRIPT.json (every key optional):
//   capabilities   client capabilities sent in initialize (default {})
//   elicitation    "accept" | "decline" | null: declare elicitation and
//                  answer elicitation/create with {action:"accept",
//                  content:{approve:true}} or {action:"decline"}
//   roots          [uri, ...]: declare roots and answer roots/list
//   connectTimeoutMs (30000), closeTimeoutMs (10000), maxBufferSize (SDK's 10 MiB)
//   steps          [{op:"list"} | {op:"list_prompts"} | {op:"list_resources"} |
//                   {op:"list_templates"} | {op:"call", name, arguments, timeoutMs} |
//                   {op:"call_task", name, arguments, timeoutMs} |
//                   {op:"cancel_call", name, arguments, afterMs, timeoutMs} |
//                   {op:"ping"} | {op:"read_resource", uri} | {op:"sleep", ms}]
//
// Output: {client, connectMs, protocolVersion, serverVersion,
// serverCapabilities, instructions, steps:[{op, name?, ok, result|error,
// elapsedMs}], elicitations, rootsRequests, notifications, transportErrors,
// childExit?} or, when connecting fails, the same with connectError and no
// connection fields. The child's stderr goes to ours; the child gets our
// whole environment.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { answerElicitation, answerRoots, capabilitiesOf, childEnv, log, newState, parseArgs, runScript, watchChild } from './client-common.mjs';

const TAG = 'sdk-client';
const { script, command, args } = parseArgs(TAG);
const state = newState(TAG);

// The v1 client tells the transport the negotiated version through this
// optional hook (client/index.js); the stdio transport does not implement it.
class RecordingTransport extends StdioClientTransport {
  setProtocolVersion(version) {
    this.protocolVersion = version;
  }
  async start() {
    await super.start();
    watchChild(this, state);
  }
}

const transport = new RecordingTransport({
  command,
  args,
  env: childEnv(),
  stderr: 'inherit',
  ...(script.maxBufferSize ? { maxBufferSize: script.maxBufferSize } : {}),
});
const client = new Client({ name: 'vouch-sdk-v1-test-client', version: '1.0.0' }, { capabilities: capabilitiesOf(script) });

if (script.elicitation != null) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => answerElicitation(script, state, request.params));
}
if (Array.isArray(script.roots)) {
  client.setRequestHandler(ListRootsRequestSchema, async () => answerRoots(script, state));
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
  connect: () => client.connect(transport, script.connectTimeoutMs ? { timeout: script.connectTimeoutMs } : undefined),
  async list(kind, cursor) {
    const params = cursor === undefined ? {} : { cursor };
    switch (kind) {
      case 'tools':
        return client.listTools(params);
      case 'prompts':
        return client.listPrompts(params);
      case 'resources':
        return client.listResources(params);
      case 'resourceTemplates':
        return client.listResourceTemplates(params);
    }
    throw new Error(`unknown list ${kind}`);
  },
  call: (params, opts) => client.callTool(params, CallToolResultSchema, requestOptions(opts)),
  async callTask(params, opts) {
    // Experimental tasks (2025-11-25): the stream yields taskCreated /
    // taskStatus messages, then one result or error.
    const messages = [];
    let final;
    for await (const m of client.experimental.tasks.callToolStream(params, CallToolResultSchema, requestOptions(opts))) {
      if (m.type === 'error') {
        messages.push({ type: 'error', error: { code: m.error?.code ?? null, message: String(m.error?.message ?? m.error) } });
        throw Object.assign(new Error(m.error?.message ?? 'task failed'), { code: m.error?.code ?? null, data: { messages } });
      }
      messages.push(m);
      if (m.type === 'result') final = m.result;
    }
    return { result: final ?? null, messages };
  },
  ping: () => client.ping(),
  readResource: (uri) => client.readResource({ uri }),
  close: () => client.close(),
};

await runScript({
  tag: TAG,
  script,
  adapter,
  state,
  describe: () => ({
    protocolVersion: transport.protocolVersion ?? null,
    serverVersion: client.getServerVersion() ?? null,
    serverCapabilities: client.getServerCapabilities() ?? null,
    instructions: client.getInstructions() ?? null,
  }),
});
