#!/usr/bin/env node
// The conformance server of the 2025-11-25 era: a stdio MCP server on the v1
// TypeScript SDK (@modelcontextprotocol/sdk 1.32.2, low-level `Server`, so
// every definition is listed exactly as written in fixtures.mjs) exposing
// what the server scenarios of @modelcontextprotocol/conformance 0.1.16
// call. tests/mcp_conformance.rs puts it behind the Streamable HTTP bridge,
// alone and through `vouch wrap`.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
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

const ELICIT_TOOLS = [
  {
    name: 'test_sampling',
    description: 'Asks the client for a model completion of the prompt.',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt to send' } },
      required: ['prompt'],
    },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user a question through the client.',
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string', description: 'The message to show' } },
      required: ['message'],
    },
  },
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Asks the user to fill in a form whose fields have defaults.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'test_elicitation_sep1330_enums',
    description: 'Asks the user to pick from enumerated options.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'test_reconnection',
    description: 'Answers after a short pause.',
    inputSchema: { type: 'object', properties: {} },
  },
];

const DEFAULTS_FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: {
      type: 'string',
      description: 'User status',
      enum: ['active', 'inactive', 'pending'],
      default: 'active',
    },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  },
  required: [],
};

const ENUMS_FORM = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      description: 'Select one option with titles',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      description: 'Select one option (legacy)',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      description: 'Select multiple options',
      minItems: 1,
      maxItems: 3,
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      description: 'Select multiple options with titles',
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
  required: [],
};

const server = new Server(
  { name: 'vouch-conformance-2025', version: '1.0.0' },
  {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      logging: {},
      completions: {},
    },
  },
);

const text = (t) => ({ content: [{ type: 'text', text: t }] });

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...TOOLS, ...ELICIT_TOOLS] }));

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const { name, arguments: args = {} } = request.params;
  const simple = simpleToolResult(name);
  if (simple) return simple;
  const log = (data) =>
    extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
  const elicit = (message, requestedSchema) =>
    extra.sendRequest({ method: 'elicitation/create', params: { message, requestedSchema } }, ElicitResultSchema);
  switch (name) {
    case 'test_tool_with_logging':
      await log('Tool execution started');
      await sleep(50);
      await log('Tool processing data');
      await sleep(50);
      await log('Tool execution completed');
      return text('Tool with logging executed successfully');
    case 'test_tool_with_progress': {
      const progressToken = request.params._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
          });
        }
        if (progress < 100) await sleep(50);
      }
      return text(String(progressToken ?? 'no progress token'));
    }
    case 'test_sampling': {
      const r = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }], maxTokens: 100 },
        },
        CreateMessageResultSchema,
      );
      return text(`LLM response: ${r.content?.text ?? 'No response'}`);
    }
    case 'test_elicitation': {
      const r = await elicit(String(args.message), {
        type: 'object',
        properties: { response: { type: 'string', description: "User's response" } },
        required: ['response'],
      });
      return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case 'test_elicitation_sep1034_defaults': {
      const r = await elicit('Please review and update the form fields with defaults', DEFAULTS_FORM);
      return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case 'test_elicitation_sep1330_enums': {
      const r = await elicit('Please select options from the enum fields', ENUMS_FORM);
      return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case 'test_reconnection':
      // A stdio server cannot close the bridge's SSE stream; it answers
      // after a pause (the scenario reports that as a warning).
      await sleep(100);
      return text('Reconnection test completed.');
    default:
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }
});

server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
  resourceTemplates: RESOURCE_TEMPLATES,
}));
server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
  const contents = readResource(request.params.uri);
  if (!contents) {
    throw new McpError(ErrorCode.InvalidParams, 'Resource not found', { uri: request.params.uri });
  }
  return { contents };
});
server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));

server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
server.setRequestHandler(GetPromptRequestSchema, async (request) => {
  const messages = getPrompt(request.params.name, request.params.arguments ?? {});
  if (!messages) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
  return { messages };
});

server.setRequestHandler(SetLevelRequestSchema, async (request) => {
  await server.sendLoggingMessage({ level: 'info', data: `Log level set to: ${request.params.level}` });
  return {};
});
server.setRequestHandler(CompleteRequestSchema, async () => ({
  completion: { values: [], total: 0, hasMore: false },
}));

await server.connect(new StdioServerTransport());
