// Shared by sdk-client.mjs (v1 SDK) and sdk-v2-client.mjs (v2 SDK): the
// command line, the SCRIPT.json step runner and the one JSON document they
// print. Not a script of its own.
//
//   node sdk-client.mjs SCRIPT.json -- COMMAND ARGS...
//
// Each SDK script supplies an adapter: { connect(), list(kind, cursor),
// call(params, {timeoutMs, signal}), callTask(params, {timeoutMs}), ping(),
// readResource(uri), close() }. Everything a step does is caught and
// recorded in its own entry; the script always ends by printing the output
// document and exiting 0 (2 only for a bad command line or SCRIPT.json).
import { readFileSync } from 'node:fs';

export function log(tag, text) {
  process.stderr.write(`${tag}: ${text}\n`);
}

export function usage(tag) {
  process.stderr.write(`usage: node ${tag}.mjs SCRIPT.json -- COMMAND ARGS...\n`);
  process.exit(2);
}

/** argv → { script, command, args }. */
export function parseArgs(tag) {
  const argv = process.argv.slice(2);
  const dd = argv.indexOf('--');
  if (dd !== 1 || argv.length < 3) usage(tag);
  let script;
  try {
    script = JSON.parse(readFileSync(argv[0], 'utf8'));
  } catch (e) {
    log(tag, `cannot read ${argv[0]}: ${e.message}`);
    process.exit(2);
  }
  if (script === null || typeof script !== 'object' || Array.isArray(script)) {
    log(tag, `${argv[0]}: not a JSON object`);
    process.exit(2);
  }
  return { script, command: argv[2], args: argv.slice(3) };
}

/** The child's environment: all of ours (the v1 client passes only six variables otherwise). */
export function childEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (typeof v === 'string') env[k] = v;
  return env;
}

/** An error as {code, message} (+ data, name where present). */
export function errorOf(e) {
  if (e === null || typeof e !== 'object') return { code: null, message: String(e) };
  const out = { code: typeof e.code === 'number' || typeof e.code === 'string' ? e.code : null, message: String(e.message ?? e) };
  if (e.data !== undefined) out.data = e.data;
  if (e.name && e.name !== 'Error') out.name = e.name;
  return out;
}

/** Client capabilities from SCRIPT.json (elicitation and roots added when those keys are set). */
export function capabilitiesOf(script) {
  const caps = structuredClone(script.capabilities ?? {});
  if (script.elicitation != null && caps.elicitation === undefined) caps.elicitation = {};
  if (Array.isArray(script.roots) && caps.roots === undefined) caps.roots = {};
  return caps;
}

/** The answer to an elicitation/create request, recording it in `state.elicitations`. */
export function answerElicitation(script, state, params) {
  state.elicitations.push({
    message: params?.message ?? null,
    requestedSchema: params?.requestedSchema ?? null,
    mode: params?.mode ?? null,
    answered: script.elicitation,
  });
  log(state.tag, `elicitation/create received: ${JSON.stringify(params?.message ?? null)} → ${script.elicitation}`);
  if (script.elicitation === 'accept') return { action: 'accept', content: { approve: true } };
  return { action: 'decline' };
}

export function answerRoots(script, state) {
  state.rootsRequests += 1;
  return { roots: script.roots.map((uri) => ({ uri })) };
}

const LIST_KIND = { list: 'tools', list_prompts: 'prompts', list_resources: 'resources', list_templates: 'resourceTemplates' };
const MAX_PAGES = 1000;

/** Runs one step against the adapter; never throws. */
async function runStep(adapter, step, tag) {
  const t0 = performance.now();
  const entry = { op: step?.op ?? null, ok: false };
  if (step?.name !== undefined) entry.name = step.name;
  try {
    switch (step?.op) {
      case 'list':
      case 'list_prompts':
      case 'list_resources':
      case 'list_templates': {
        const key = LIST_KIND[step.op];
        const items = [];
        const cursors = [];
        let cursor;
        let pages = 0;
        let last;
        do {
          last = await adapter.list(key, cursor, step);
          pages += 1;
          items.push(...(last?.[key] ?? []));
          cursor = last?.nextCursor;
          if (cursor !== undefined) {
            if (cursors.includes(cursor)) throw new Error(`${key} cursor ${JSON.stringify(cursor)} repeated`);
            cursors.push(cursor);
          }
        } while (cursor !== undefined && pages < MAX_PAGES);
        const { nextCursor: _n, [key]: _i, ...rest } = last ?? {};
        // pages: null when the SDK walked the pages itself (the v2 client's list verbs).
        entry.result = { ...rest, [key]: items, pages: adapter.aggregatesPages ? null : pages };
        break;
      }
      case 'call':
        entry.result = await adapter.call({ name: step.name, arguments: step.arguments ?? {} }, { timeoutMs: step.timeoutMs });
        break;
      case 'call_task':
        entry.result = await adapter.callTask({ name: step.name, arguments: step.arguments ?? {} }, { timeoutMs: step.timeoutMs });
        break;
      case 'cancel_call': {
        const ac = new AbortController();
        const afterMs = step.afterMs ?? 100;
        const timer = setTimeout(() => {
          entry.abortedAtMs = Math.round(performance.now() - t0);
          ac.abort(new Error(`aborted by sdk client after ${afterMs} ms`));
        }, afterMs);
        try {
          entry.result = await adapter.call(
            { name: step.name, arguments: step.arguments ?? {} },
            { timeoutMs: step.timeoutMs, signal: ac.signal },
          );
        } finally {
          clearTimeout(timer);
        }
        break;
      }
      case 'ping':
        entry.result = await adapter.ping();
        break;
      case 'read_resource':
        entry.result = await adapter.readResource(step.uri);
        break;
      case 'sleep':
        await new Promise((r) => setTimeout(r, step.ms ?? 100));
        entry.result = {};
        break;
      default:
        throw new Error(`unknown op ${JSON.stringify(step?.op)}`);
    }
    entry.ok = true;
  } catch (e) {
    entry.error = errorOf(e);
    log(tag, `step ${entry.op}${entry.name ? ' ' + entry.name : ''} failed: ${entry.error.message}`);
  }
  entry.elapsedMs = Math.round((performance.now() - t0) * 1000) / 1000;
  return entry;
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`${what} timed out after ${ms} ms`), { code: 'timeout' })), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Prints the document and exits 0 once stdout is flushed. */
export function finish(output) {
  process.stdout.write(JSON.stringify(output) + '\n', () => process.exit(0));
}

/**
 * Connects, runs every step, closes, prints. `state` is shared with the
 * adapter's handlers (elicitations, notifications, …); `describe()` returns
 * the connection fields of the output after a successful connect.
 */
export async function runScript({ tag, script, adapter, state, describe }) {
  const output = { client: tag };
  const connectTimeoutMs = script.connectTimeoutMs ?? 30000;
  const t0 = performance.now();
  try {
    await withTimeout(adapter.connect(), connectTimeoutMs, 'connect');
    output.connectMs = Math.round((performance.now() - t0) * 1000) / 1000;
  } catch (e) {
    output.connectMs = Math.round((performance.now() - t0) * 1000) / 1000;
    output.connectError = errorOf(e);
    log(tag, `connect failed: ${output.connectError.message}`);
  }
  if (output.connectError === undefined) {
    Object.assign(output, describe());
    output.steps = [];
    for (const step of script.steps ?? []) output.steps.push(await runStep(adapter, step, tag));
  } else {
    output.steps = [];
  }
  output.elicitations = state.elicitations;
  output.rootsRequests = state.rootsRequests;
  output.notifications = state.notifications;
  output.transportErrors = state.transportErrors;
  try {
    await withTimeout(adapter.close(), script.closeTimeoutMs ?? 10000, 'close');
  } catch (e) {
    output.closeError = errorOf(e);
  }
  if (state.childExit) output.childExit = state.childExit;
  finish(output);
}

export function newState(tag) {
  return { tag, elicitations: [], rootsRequests: 0, notifications: [], transportErrors: [], childExit: null };
}

/** Watches the transport's child process (a private field in both SDKs) for its exit status. */
export function watchChild(transport, state) {
  const proc = transport._process;
  if (proc && typeof proc.on === 'function') {
    proc.on('exit', (code, signal) => {
      state.childExit = { code, signal };
    });
  }
}
