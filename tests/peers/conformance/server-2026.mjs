#!/usr/bin/env node
// The conformance server of the 2026-07-28 era: a stdio MCP server on the v2
// TypeScript SDK (@modelcontextprotocol/server 2.4.0, `serveStdio` with the
// low-level `Server`, so every definition is listed exactly as written in
// fixtures.mjs) exposing what the server scenarios of
// @modelcontextprotocol/conformance 0.2.0-alpha.12 (`--spec-version
// 2026-07-28`) call, including the multi-round-trip (`input_required`)
// tools. tests/mcp_conformance.rs puts it behind the Streamable HTTP bridge,
// alone and through `vouch wrap`.
import { createHmac, randomUUID } from 'node:crypto';
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ResourceNotFoundError,
  Server,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import {
  PROMPTS,
  RESOURCES,
  RESOURCE_TEMPLATES,
  TOOLS,
  getPrompt,
  readResource,
  simpleToolResult,
  sleep,
} from './fixtures.mjs';

const INVALID_PARAMS = -32602;
const EMPTY = { type: 'object', properties: {} };
const CAPS_KEY = 'io.modelcontextprotocol/clientCapabilities';
const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';

const MRTR_TOOLS = [
  ['test_missing_capability', 'Needs the client to declare sampling.'],
  ['test_input_required_result_elicitation', 'Asks the user for a name, then greets.'],
  ['test_input_required_result_sampling', 'Asks the client for a model completion.'],
  ['test_input_required_result_list_roots', 'Asks the client for its roots.'],
  ['test_input_required_result_request_state', 'Asks for a confirmation, keeping state between rounds.'],
  ['test_input_required_result_multiple_inputs', 'Asks for several inputs in one round.'],
  ['test_input_required_result_multi_round', 'Asks for input over two rounds.'],
  ['test_input_required_result_tampered_state', 'Asks for a confirmation; refuses altered state.'],
  ['test_input_required_result_capabilities', 'Asks only for what the client declared it can answer.'],
  ['test_streaming_elicitation', 'Reports progress, then answers.'],
  ['test_logging_tool', 'Logs one message when the request asks for a log level.'],
].map(([name, description]) => ({ name, description, inputSchema: EMPTY }));

// SEP-2243: a parameter mirrored into an `Mcp-Param-Region` HTTP header,
// which the bridge checks against the body.
const HEADER_TOOL = {
  name: 'test_custom_header',
  description: 'Echoes the region it was given.',
  inputSchema: {
    type: 'object',
    properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
    required: ['region'],
  },
};

const MRTR_PROMPTS = [{ name: 'test_input_required_result_prompt', description: 'A prompt that needs context from the user.' }];

// requestState is signed so that a tampered copy is refused (-32602).
const SECRET = `vouch-conformance-${randomUUID()}`;
const sign = (payload) => {
  const data = JSON.stringify(payload);
  return JSON.stringify({ data, mac: createHmac('sha256', SECRET).update(data).digest('hex') });
};
const open = (raw) => {
  try {
    const { data, mac } = JSON.parse(raw);
    if (createHmac('sha256', SECRET).update(data).digest('hex') !== mac) return null;
    return JSON.parse(data);
  } catch {
    return null;
  }
};

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const elicit = (message, properties) => ({
  method: 'elicitation/create',
  params: { message, requestedSchema: { type: 'object', properties, required: Object.keys(properties) } },
});
const sample = (prompt, maxTokens) => ({
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens },
});
const needInput = (inputRequests, state) => ({
  resultType: 'input_required',
  inputRequests,
  ...(state === undefined ? {} : { requestState: sign(state) }),
});
const field = (response, name) => {
  const v = response?.content?.[name];
  return typeof v === 'string' ? v : 'unknown';
};

function mrtrCall(name, ctx) {
  const inputs = ctx.mcpReq.inputResponses ?? {};
  const raw = ctx.mcpReq.requestState();
  let state;
  if (raw !== undefined) {
    state = open(raw);
    if (!state) throw new ProtocolError(INVALID_PARAMS, 'requestState integrity check failed');
  }
  const caps = ctx.mcpReq.envelope?.[CAPS_KEY] ?? {};
  switch (name) {
    case 'test_missing_capability':
      if (!caps.sampling) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { sampling: {} } });
      return text('Success');
    case 'test_input_required_result_elicitation':
      if (inputs.user_name) return text(`Hello, ${field(inputs.user_name, 'name')}!`);
      return needInput({ user_name: elicit('What is your name?', { name: { type: 'string' } }) });
    case 'test_input_required_result_sampling':
      if (inputs.sample_request) {
        const t = inputs.sample_request.content?.text;
        return text(`Sampling result: ${typeof t === 'string' ? t : 'no response'}`);
      }
      return needInput({ sample_request: sample('What is the capital of France?', 100) });
    case 'test_input_required_result_list_roots':
      if (inputs.roots_request) {
        const roots = Array.isArray(inputs.roots_request.roots) ? inputs.roots_request.roots : [];
        return text(`Found ${roots.length} root(s)`);
      }
      return needInput({ roots_request: { method: 'roots/list', params: {} } });
    case 'test_input_required_result_request_state':
      if (state?.kind === 'request-state' && inputs.confirm?.content?.ok === true) {
        return text('state-ok: requestState validated');
      }
      return needInput(
        { confirm: elicit('Please confirm', { ok: { type: 'boolean' } }) },
        { kind: 'request-state', nonce: randomUUID() },
      );
    case 'test_input_required_result_multiple_inputs':
      if (state?.kind === 'multiple-inputs' && inputs.user_name && inputs.greeting && inputs.client_roots) {
        const greeting = inputs.greeting.content?.text;
        const roots = Array.isArray(inputs.client_roots.roots) ? inputs.client_roots.roots : [];
        return text(
          `Name: ${field(inputs.user_name, 'name')}; Greeting: ${typeof greeting === 'string' ? greeting : 'Hello there!'}; Roots: ${roots.length}`,
        );
      }
      return needInput(
        {
          user_name: elicit('What is your name?', { name: { type: 'string' } }),
          greeting: sample('Generate a greeting', 50),
          client_roots: { method: 'roots/list', params: {} },
        },
        { kind: 'multiple-inputs', nonce: randomUUID() },
      );
    case 'test_input_required_result_multi_round':
      if (state?.round === 1 && inputs.step1) {
        return needInput(
          { step2: elicit('Step 2: What is your favorite color?', { color: { type: 'string' } }) },
          { round: 2, name: field(inputs.step1, 'name'), nonce: randomUUID() },
        );
      }
      if (state?.round === 2 && inputs.step2) {
        return text(`Multi-round complete for ${state.name} who likes ${field(inputs.step2, 'color')}`);
      }
      return needInput(
        { step1: elicit('Step 1: What is your name?', { name: { type: 'string' } }) },
        { round: 1, nonce: randomUUID() },
      );
    case 'test_input_required_result_tampered_state':
      if (state?.kind === 'tamper-test' && inputs.confirm) return text('integrity-ok: state verified');
      return needInput(
        { confirm: elicit('Please confirm', { ok: { type: 'boolean' } }) },
        { kind: 'tamper-test', nonce: randomUUID() },
      );
    case 'test_input_required_result_capabilities': {
      if (Object.keys(inputs).length > 0) return text(`capabilities-ok: received ${Object.keys(inputs).join(',')}`);
      const requests = {};
      if (caps.elicitation) requests.elicit_input = elicit('Elicitation input', { value: { type: 'string' } });
      if (caps.sampling) requests.sample_input = sample('Sample request', 50);
      if (Object.keys(requests).length === 0) return text('No supported capabilities declared');
      return needInput(requests, { kind: 'capabilities-test', nonce: randomUUID() });
    }
    case 'test_streaming_elicitation':
      return (async () => {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: 'stream', progress: 50, total: 100 },
        });
        return text('Streaming complete');
      })();
    case 'test_logging_tool':
      return (async () => {
        if (ctx.mcpReq.envelope?.[LOG_LEVEL_KEY]) {
          await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: 'Logging evaluated' } });
        }
        return text('Logging evaluated');
      })();
    default:
      return undefined;
  }
}

function create() {
  const server = new Server(
    { name: 'vouch-conformance-2026', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { listChanged: true },
        prompts: { listChanged: true },
        completions: {},
      },
    },
  );
  server.setRequestHandler('tools/list', async () => ({ tools: [...TOOLS, ...MRTR_TOOLS, HEADER_TOOL] }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name } = request.params;
    const simple = simpleToolResult(name);
    if (simple) return simple;
    const mrtr = await mrtrCall(name, ctx);
    if (mrtr) return mrtr;
    switch (name) {
      case 'test_custom_header':
        return text(`region: ${request.params.arguments?.region}`);
      case 'test_tool_with_logging':
        for (const data of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
          await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data } });
          await sleep(50);
        }
        return text('Tool with logging executed successfully');
      case 'test_tool_with_progress': {
        const progressToken = request.params._meta?.progressToken;
        for (const progress of [0, 50, 100]) {
          if (progressToken !== undefined) {
            await ctx.mcpReq.notify({
              method: 'notifications/progress',
              params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
            });
          }
          if (progress < 100) await sleep(50);
        }
        return text(String(progressToken ?? 'no progress token'));
      }
      default:
        throw new ProtocolError(INVALID_PARAMS, `Unknown tool: ${name}`);
    }
  });
  server.setRequestHandler('resources/list', async () => ({ resources: RESOURCES }));
  server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler('resources/read', async (request) => {
    const contents = readResource(request.params.uri);
    if (!contents) throw new ResourceNotFoundError(request.params.uri);
    return { contents };
  });
  server.setRequestHandler('prompts/list', async () => ({ prompts: [...PROMPTS, ...MRTR_PROMPTS] }));
  server.setRequestHandler('prompts/get', async (request, ctx) => {
    const { name, arguments: args = {} } = request.params;
    if (name === 'test_input_required_result_prompt') {
      const inputs = ctx.mcpReq.inputResponses ?? {};
      if (inputs.user_context) {
        return {
          messages: [
            { role: 'user', content: { type: 'text', text: `Prompt with context: ${field(inputs.user_context, 'context')}` } },
          ],
        };
      }
      return needInput({ user_context: elicit('What context should the prompt use?', { context: { type: 'string' } }) });
    }
    const messages = getPrompt(name, args);
    if (!messages) throw new ProtocolError(INVALID_PARAMS, `Unknown prompt: ${name}`);
    return { messages };
  });
  server.setRequestHandler('completion/complete', async () => ({
    completion: { values: [], total: 0, hasMore: false },
  }));
  return server;
}

serveStdio(create);
