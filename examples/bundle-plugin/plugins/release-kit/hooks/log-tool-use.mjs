#!/usr/bin/env node
// PreToolUse hook: appends each tool call to <data folder>/tool-log.jsonl. The hook input arrives
// as JSON on stdin; exiting 0 with no output lets the call go ahead unchanged.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const dataDir = process.argv[2];
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { session_id, tool_name, tool_input } = JSON.parse(input);
mkdirSync(dataDir, { recursive: true });
appendFileSync(join(dataDir, 'tool-log.jsonl'), `${JSON.stringify({ at: new Date().toISOString(), session_id, tool_name, tool_input })}\n`);
