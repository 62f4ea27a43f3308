// A loopback fake of the Anthropic Messages API (POST /v1/messages, SSE streaming, the real
// wire format via `anthropicFrames` from @tessera/test-servers) that plays one scripted task
// for any client that speaks the Messages API:
//
//   call 1 → tool_use bash `pwd`
//   call 2 → tool_use read  <workspace>/NOTES.md
//   call 3 → tool_use write <workspace>/SUMMARY.md (the summary quotes the marker read in call 2)
//   call 4 → final text
//
// The script position is not a counter on the server: it is the number of tool_result blocks in
// the request's messages, so a client's extra requests (title / summary / quota checks, requests
// to a small model, requests without the task's tools) get a short plain-text reply and do not
// advance the script. The tool names and input shapes follow the client's own tools, read from
// the request: Claude Code and Tessera (`Bash {command}`, `Read {file_path}`,
// `Write {file_path, content}`) or pi (`bash {command}`, `read {path}`, `write {path, content}`).
//
// The same server doubles as the contenders' HTTP(S)_PROXY (with NO_PROXY for loopback), so a
// client that tries to reach any other host through its proxy support shows up as a `proxy`
// request (a CONNECT, or an absolute-URL request for another host), is refused with 403, and
// is reported. Nothing leaves the machine either way: the bench host has no route out.
//
// Every request is recorded per run (`beginRun` / `endRun`) with what the fake made of it, and
// any deviation from the script (a tool error, the pwd result not naming the workspace, the
// marker missing from the read result, calls past the end) is listed in `problems`.

import { createServer } from 'node:http';
import { anthropicErrorBody, anthropicFrames } from '@tessera/test-servers';

/** The tool dialects the fake speaks, keyed by the client's tool names. */
export const DIALECTS = {
  claude: {
    bash: 'Bash',
    read: 'Read',
    write: 'Write',
    bashInput: (command) => ({ command, description: 'Print the working directory' }),
    readInput: (path) => ({ file_path: path }),
    writeInput: (path, content) => ({ file_path: path, content }),
  },
  pi: {
    bash: 'bash',
    read: 'read',
    write: 'write',
    bashInput: (command) => ({ command }),
    readInput: (path) => ({ path }),
    writeInput: (path, content) => ({ path, content }),
  },
};

export const NOTES_FILE = 'NOTES.md';
export const SUMMARY_FILE = 'SUMMARY.md';
export const FINAL_TEXT = 'Done: SUMMARY.md summarizes NOTES.md.';

/** The SUMMARY.md the fake asks the client to write (it quotes the marker it read). */
export function summaryFor(marker) {
  return `# Summary\n\nNOTES.md describes the release checklist of a small service (marker ${marker}).\n`;
}

function toolNames(body) {
  return Array.isArray(body?.tools) ? body.tools.map((tool) => tool?.name).filter((name) => typeof name === 'string') : [];
}

function dialectOf(names) {
  for (const [id, dialect] of Object.entries(DIALECTS)) {
    if (names.includes(dialect.bash) && names.includes(dialect.read) && names.includes(dialect.write)) return { id, ...dialect };
  }
  return undefined;
}

/** All tool_result blocks of the request's messages, in order. */
function toolResults(body) {
  const results = [];
  for (const message of Array.isArray(body?.messages) ? body.messages : []) {
    if (message?.role !== 'user' || !Array.isArray(message.content)) continue;
    for (const block of message.content) if (block?.type === 'tool_result') results.push(block);
  }
  return results;
}

function resultText(block) {
  if (typeof block?.content === 'string') return block.content;
  if (Array.isArray(block?.content)) return block.content.map((part) => (part?.type === 'text' ? part.text : '')).join('');
  return '';
}

export class ScriptedMessagesServer {
  constructor() {
    this.sockets = new Set();
    this.server = undefined;
    this.url = '';
    this.run = undefined;
    this.counter = 0;
    /** Requests that arrived outside a run (should stay empty). */
    this.stray = [];
  }

  async listen() {
    const server = createServer((request, response) => void this.handle(request, response));
    server.keepAliveTimeout = 60_000;
    server.on('connect', (request, socket) => {
      this.log().push({ method: 'CONNECT', path: request.url, kind: 'proxy' });
      socket.on('error', () => {});
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    this.server = server;
    this.url = `http://127.0.0.1:${server.address().port}`;
    return this.url;
  }

  /** Starts recording one contender run in `workspace` (absolute, real path) expecting `marker`. */
  beginRun({ workspace, marker }) {
    this.run = { workspace, marker, requests: [], problems: [] };
  }

  /** Ends the run; returns its record. */
  endRun() {
    const run = this.run;
    this.run = undefined;
    return run;
  }

  log() {
    return this.run ? this.run.requests : this.stray;
  }

  async close() {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }

  async handle(request, response) {
    const chunks = [];
    try {
      for await (const chunk of request) chunks.push(chunk);
    } catch {
      return; // client went away
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let body;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const path = request.url ?? '/';
    const entry = { method: request.method, path, model: body?.model, stream: body?.stream === true, tools: toolNames(body).length };
    this.log().push(entry);
    const requestId = `req_bench_${++this.counter}`;
    let pathname = path.split('?')[0];
    if (/^https?:\/\//i.test(path)) {
      // A proxied request (absolute URL): served only when it is addressed to this server.
      const target = new URL(path);
      if (target.host !== new URL(this.url).host) {
        entry.kind = 'proxy';
        this.json(response, 403, anthropicErrorBody(403, `Fake server: no route to ${target.host}`), requestId);
        return;
      }
      pathname = target.pathname;
    }

    if (request.method === 'POST' && pathname === '/v1/messages/count_tokens') {
      entry.kind = 'count_tokens';
      this.json(response, 200, { input_tokens: Math.max(1, Math.round(text.length / 4)) }, requestId);
      return;
    }
    if (request.method !== 'POST' || pathname !== '/v1/messages' || body === undefined) {
      entry.kind = 'other';
      this.json(response, 404, anthropicErrorBody(404, `Fake server: no ${request.method} ${pathname}`), requestId);
      return;
    }

    const turn = this.turnFor(body, entry);
    const id = `msg_bench_${this.counter}`;
    const model = typeof body.model === 'string' ? body.model : 'claude-fake';
    const usage = { input_tokens: Math.max(1, Math.round(text.length / 4)), output_tokens: 20 };
    if (body.stream === true) {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'request-id': requestId });
      response.end(anthropicFrames({ ...turn, model, usage }, id).join(''));
      return;
    }
    // Non-streaming request: the same turn as one JSON message.
    const content = [];
    if (turn.text !== undefined) content.push({ type: 'text', text: Array.isArray(turn.text) ? turn.text.join('') : turn.text });
    for (const call of turn.toolCalls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
    const stopReason = turn.toolCalls?.length ? 'tool_use' : 'end_turn';
    this.json(response, 200, { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage }, requestId);
  }

  /** The scripted turn for one Messages request; annotates `entry` with what it was. */
  turnFor(body, entry) {
    const run = this.run;
    const dialect = dialectOf(toolNames(body));
    if (!dialect || !run) {
      entry.kind = 'side';
      return { text: 'OK.' };
    }
    const results = toolResults(body);
    const step = results.length;
    entry.kind = `task:${step}`;
    entry.dialect = dialect.id;
    const last = results.at(-1);
    if (last?.is_error === true) run.problems.push(`call ${step + 1}: the previous tool result is an error: ${resultText(last).slice(0, 300)}`);
    const toolId = `toolu_bench_${this.counter}`;
    const notes = `${run.workspace}/${NOTES_FILE}`;
    const summary = `${run.workspace}/${SUMMARY_FILE}`;
    switch (step) {
      case 0:
        return { text: "I'll check where I am first.", toolCalls: [{ id: toolId, name: dialect.bash, input: dialect.bashInput('pwd') }] };
      case 1:
        if (!resultText(last).includes(run.workspace)) run.problems.push(`call 2: the pwd result does not name the workspace: ${JSON.stringify(resultText(last).slice(0, 300))}`);
        return { text: `Now I'll read ${NOTES_FILE}.`, toolCalls: [{ id: toolId, name: dialect.read, input: dialect.readInput(notes) }] };
      case 2: {
        const seen = resultText(last).includes(run.marker);
        if (!seen) run.problems.push(`call 3: the read result does not contain the marker: ${JSON.stringify(resultText(last).slice(0, 300))}`);
        const content = summaryFor(seen ? run.marker : 'MISSING');
        return { text: `Writing ${SUMMARY_FILE}.`, toolCalls: [{ id: toolId, name: dialect.write, input: dialect.writeInput(summary, content), chunks: 3 }] };
      }
      case 3:
        return { text: [FINAL_TEXT.slice(0, 18), FINAL_TEXT.slice(18)] };
      default:
        run.problems.push(`call ${step + 1}: a task request after the script ended`);
        return { text: 'Done.' };
    }
  }

  json(response, status, body, requestId) {
    response.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId });
    response.end(JSON.stringify(body));
  }
}
