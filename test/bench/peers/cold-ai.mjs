// Cold-start peer: load the Vercel AI SDK, run one offline streamText turn,
// print the text. The model is the SDK's own MockLanguageModelV4 (from
// `ai/test`); its doStream returns a prebuilt ReadableStream of
// LanguageModelV4 stream parts: "hello" as two text deltas, then finish.

import { streamText } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 2, text: 2, reasoning: 0 },
};

const model = new MockLanguageModelV4({
  doStream: async () => ({
    stream: convertArrayToReadableStream([
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't0' },
      { type: 'text-delta', id: 't0', delta: 'hel' },
      { type: 'text-delta', id: 't0', delta: 'lo' },
      { type: 'text-end', id: 't0' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
    ]),
  }),
});

let failure;
const result = streamText({ model, prompt: 'hi', onError: ({ error }) => { failure = error; } });

let text = '';
for await (const piece of result.textStream) text += piece;

if (failure || text !== (await result.text)) {
  console.error('cold-ai failed:', failure ?? `mismatch ${text}`);
  process.exit(1);
}
process.stdout.write(text + '\n');
