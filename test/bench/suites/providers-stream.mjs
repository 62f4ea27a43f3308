#!/usr/bin/env node
// Providers streaming benchmark: a 2 MB answer in 2,000 text deltas (1,000 chars each) from the
// loopback fake servers (@tessera/test-servers), timed from the first to the last delta
// delivered. For each API the same scripted stream is consumed (a) by our provider through
// `onTextDelta` and (b) directly with the official SDK (`messages.create({ stream: true })` /
// `chat.completions.create({ stream: true })`, iterating events), alternating in one process.
// A third row adds a raw-payload observer to the provider, as a Session does.
//
//   npm run build
//   node --expose-gc test/bench/suites/providers-stream.mjs [--quick]
//
// Target: provider ≤ 1.1× the raw SDK (median first→last delta time), for both providers.

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { AnthropicProvider } from '@tessera/plugin-provider-anthropic';
import { OpenAIProvider } from '@tessera/plugin-provider-openai';
import { FakeAnthropicServer, FakeOpenAIServer } from '@tessera/test-servers';
import { environment, fmt, fmtRatio, parseArgs, summarize, table, writeResults } from '../lib/common.mjs';

const DELTAS = 2_000;
const DELTA_CHARS = 1_000;
const TARGET_RATIO = 1.1;

const args = parseArgs(process.argv.slice(2));
for (const key of Object.keys(args)) if (key !== 'quick') throw new Error(`unknown option --${key}; usage: providers-stream.mjs [--quick]`);
const quick = Boolean(args.quick);
const plan = quick ? { warmup: 2, samples: 4 } : { warmup: 6, samples: 25 };

// Distinct chunks (so nothing can be deduplicated), plain ASCII (no JSON escaping).
const chunks = Array.from({ length: DELTAS }, (_, index) => `${String(index).padStart(6, '0')}${'x'.repeat(DELTA_CHARS - 6)}`);
const expectedChars = DELTAS * DELTA_CHARS;
const messages = [{ role: 'user', content: 'stream please' }];

/** Times first→last delta; checks that every character arrived. */
function timer() {
  let first = 0;
  let last = 0;
  let chars = 0;
  let count = 0;
  return {
    onDelta(text) {
      const now = performance.now();
      if (count === 0) first = now;
      last = now;
      count += 1;
      chars += text.length;
    },
    result(label) {
      if (chars !== expectedChars) throw new Error(`${label}: received ${chars} chars in ${count} deltas, expected ${expectedChars}`);
      return { ms: last - first, deltas: count };
    },
  };
}

const anthropicServer = new FakeAnthropicServer();
const openaiServer = new FakeOpenAIServer();
await anthropicServer.listen();
await openaiServer.listen();

const anthropicClient = new Anthropic({ apiKey: 'bench', baseURL: anthropicServer.baseURL, maxRetries: 0, logLevel: 'off' });
const anthropicProvider = new AnthropicProvider({ apiKey: 'bench', baseURL: anthropicServer.baseURL, model: 'claude-sonnet-4-6', promptCaching: false });
const openaiClient = new OpenAI({ apiKey: 'bench', baseURL: openaiServer.baseURL, maxRetries: 0, logLevel: 'off' });
const openaiProvider = new OpenAIProvider({ apiKey: 'bench', baseURL: openaiServer.baseURL, model: 'gpt-4o' });

const contenders = {
  anthropic: {
    enqueue: () => anthropicServer.reply({ text: chunks }),
    async sdk() {
      const t = timer();
      const stream = await anthropicClient.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 8192, messages, stream: true }, { maxRetries: 0 });
      for await (const event of stream) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') t.onDelta(event.delta.text);
      }
      return t.result('anthropic sdk');
    },
    async provider(observe) {
      const t = timer();
      await anthropicProvider.stream({
        messages,
        tools: [],
        signal: new AbortController().signal,
        onTextDelta: t.onDelta,
        ...(observe ? { onProviderNativeRawPayload: () => {} } : {}),
      });
      return t.result('anthropic provider');
    },
  },
  openai: {
    enqueue: () => openaiServer.reply({ text: chunks, usage: { prompt_tokens: 10, completion_tokens: DELTAS } }),
    async sdk() {
      const t = timer();
      const stream = await openaiClient.chat.completions.create(
        { model: 'gpt-4o', messages, stream: true, stream_options: { include_usage: true } },
        { maxRetries: 0 },
      );
      for await (const chunk of stream) {
        const content = chunk.choices[0]?.delta.content;
        if (content) t.onDelta(content);
      }
      return t.result('openai sdk');
    },
    async provider(observe) {
      const t = timer();
      await openaiProvider.stream({
        messages,
        tools: [],
        signal: new AbortController().signal,
        onTextDelta: t.onDelta,
        ...(observe ? { onProviderNativeRawPayload: () => {} } : {}),
      });
      return t.result('openai provider');
    },
  },
};

const runs = {
  sdk: (contender) => contender.sdk(),
  provider: (contender) => contender.provider(false),
  observed: (contender) => contender.provider(true),
};

async function sample(contender, kind) {
  contender.enqueue();
  return runs[kind](contender);
}

const results = {};
const rows = [];
const targets = [];
try {
  for (const [api, contender] of Object.entries(contenders)) {
    const samples = { sdk: [], provider: [], observed: [] };
    for (let index = 0; index < plan.warmup; index++) for (const kind of Object.keys(runs)) await sample(contender, kind);
    globalThis.gc?.();
    // Rotate the order so drift and GC pauses fall on every contender alike.
    const kinds = Object.keys(runs);
    for (let index = 0; index < plan.samples; index++) {
      for (let offset = 0; offset < kinds.length; offset++) {
        const kind = kinds[(index + offset) % kinds.length];
        samples[kind].push((await sample(contender, kind)).ms);
      }
    }
    const sdk = summarize(samples.sdk);
    const provider = summarize(samples.provider);
    const observed = summarize(samples.observed);
    const ratio = provider.median / sdk.median;
    const observedRatio = observed.median / sdk.median;
    results[api] = { sdk, provider, observed, ratio, observedRatio, samples };
    const mbps = (ms) => fmt(expectedChars / 1e6 / (ms / 1000), 0);
    rows.push([`${api}: official SDK, raw stream`, fmt(sdk.median, 2), mbps(sdk.median), '1.00x']);
    rows.push([`${api}: provider → onTextDelta`, fmt(provider.median, 2), mbps(provider.median), fmtRatio(ratio)]);
    rows.push([`${api}: provider + raw-payload observer`, fmt(observed.median, 2), mbps(observed.median), fmtRatio(observedRatio)]);
    targets.push({
      name: `${api} provider first→last delta vs raw SDK, ${DELTAS} deltas / ${expectedChars / 1e6} MB (<= ${TARGET_RATIO}x)`,
      value: ratio,
      limit: TARGET_RATIO,
      direction: '<=',
      met: Number.isFinite(ratio) && ratio <= TARGET_RATIO,
    });
  }
} finally {
  await anthropicServer.close();
  await openaiServer.close();
}

console.log(`providers-stream benchmark${quick ? ' (quick)' : ''}: medians of ${plan.samples} samples, ${DELTAS} deltas × ${DELTA_CHARS} chars over loopback SSE`);
console.log(table(['contender', 'ms first→last', 'MB/s', 'vs SDK'], rows));
console.log('');
for (const t of targets) console.log(`${t.met ? 'TARGET met' : 'TARGET MISSED'}  ${t.name}: ${fmtRatio(t.value)}`);
const file = writeResults('providers-stream', { environment: environment(), quick, plan, deltas: DELTAS, deltaChars: DELTA_CHARS, results, targets });
console.log(`\nJSON: ${file}`);
