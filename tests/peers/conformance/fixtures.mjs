// What the conformance scenarios expect a server to expose (tool, resource
// and prompt names, contents, texts), shared by server-2025.mjs and
// server-2026.mjs. Learnt from the scenario descriptions of
// @modelcontextprotocol/conformance (`conformance list --server`, and the
// scenarios' "Server Implementation Requirements"); written for vouch's
// tests, not copied from the suite's own example server.

// A 1x1 PNG and a minimal WAV, base64.
export const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
export const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const EMPTY = { type: 'object', properties: {} };

// json-schema-2020-12 (SEP-1613, SEP-2106): every keyword must survive
// tools/list, through the SDK and through vouch wrap.
export const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

/** The tools both eras list (the era-specific ones are added by each server). */
export const TOOLS = [
  { name: 'test_simple_text', description: 'Returns a short text.', inputSchema: EMPTY },
  { name: 'test_image_content', description: 'Returns a small PNG image.', inputSchema: EMPTY },
  { name: 'test_audio_content', description: 'Returns a short WAV clip.', inputSchema: EMPTY },
  { name: 'test_embedded_resource', description: 'Returns an embedded text resource.', inputSchema: EMPTY },
  {
    name: 'test_multiple_content_types',
    description: 'Returns text, an image and an embedded resource.',
    inputSchema: EMPTY,
  },
  {
    name: 'test_tool_with_logging',
    description: 'Sends three log messages while it runs.',
    inputSchema: EMPTY,
  },
  {
    name: 'test_tool_with_progress',
    description: 'Reports progress three times while it runs.',
    inputSchema: EMPTY,
  },
  { name: 'test_error_handling', description: 'Always fails with a tool error.', inputSchema: EMPTY },
  {
    name: 'json_schema_2020_12_tool',
    description: 'A tool whose input schema uses JSON Schema 2020-12 keywords.',
    inputSchema: SCHEMA_2020_12,
  },
];

/** Content of the simple tools, by name. */
export function simpleToolResult(name) {
  switch (name) {
    case 'test_simple_text':
      return { content: [{ type: 'text', text: 'This is a simple text response for testing.' }] };
    case 'test_image_content':
      return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] };
    case 'test_audio_content':
      return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] };
    case 'test_embedded_resource':
      return {
        content: [
          {
            type: 'resource',
            resource: {
              uri: 'test://embedded-resource',
              mimeType: 'text/plain',
              text: 'This is an embedded resource content.',
            },
          },
        ],
      };
    case 'test_multiple_content_types':
      return {
        content: [
          { type: 'text', text: 'Multiple content types test:' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          {
            type: 'resource',
            resource: {
              uri: 'test://mixed-content-resource',
              mimeType: 'application/json',
              text: JSON.stringify({ test: 'data', value: 123 }),
            },
          },
        ],
      };
    case 'test_error_handling':
      return {
        isError: true,
        content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
      };
    case 'json_schema_2020_12_tool':
      return { content: [{ type: 'text', text: 'json_schema_2020_12_tool called' }] };
    default:
      return undefined;
  }
}

export const RESOURCES = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    title: 'Static Text Resource',
    description: 'A static text resource.',
    mimeType: 'text/plain',
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    title: 'Static Binary Resource',
    description: 'A static PNG image.',
    mimeType: 'image/png',
  },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    title: 'Watched Resource',
    description: 'A resource clients may subscribe to.',
    mimeType: 'text/plain',
  },
];

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'test://template/{id}/data',
    name: 'template',
    title: 'Resource Template',
    description: 'A resource template with one parameter.',
    mimeType: 'application/json',
  },
];

/** The contents of `uri`, or undefined when there is no such resource. */
export function readResource(uri) {
  if (uri === 'test://static-text') {
    return [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }];
  }
  if (uri === 'test://static-binary') {
    return [{ uri, mimeType: 'image/png', blob: PNG }];
  }
  if (uri === 'test://watched-resource') {
    return [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }];
  }
  const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri ?? '');
  if (m) {
    const id = decodeURIComponent(m[1]);
    return [
      {
        uri,
        mimeType: 'application/json',
        text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
      },
    ];
  }
  return undefined;
}

export const PROMPTS = [
  { name: 'test_simple_prompt', title: 'Simple Test Prompt', description: 'A prompt without arguments.' },
  {
    name: 'test_prompt_with_arguments',
    title: 'Prompt With Arguments',
    description: 'A prompt with two required arguments.',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    title: 'Prompt With Embedded Resource',
    description: 'A prompt that embeds a resource.',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  },
  { name: 'test_prompt_with_image', title: 'Prompt With Image', description: 'A prompt with an image.' },
];

/** The messages of prompt `name`, or undefined when there is no such prompt. */
export function getPrompt(name, args = {}) {
  switch (name) {
    case 'test_simple_prompt':
      return [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }];
    case 'test_prompt_with_arguments':
      return [
        {
          role: 'user',
          content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` },
        },
      ];
    case 'test_prompt_with_embedded_resource':
      return [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ];
    case 'test_prompt_with_image':
      return [
        { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
      ];
    default:
      return undefined;
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
