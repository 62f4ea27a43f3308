import type { CliFlags } from '../args.js';
import { CliUsageError } from '../args.js';
import type { CliIO } from '../io.js';

const STDIN_CAP_BYTES = 10 * 1024 * 1024;

/** With a prompt argument, piped stdin is waited for this long before the run goes on without it. */
const STDIN_WAIT_MS = 3000;

/** Print mode's prompt: the argument, piped stdin, or both (the argument first); `undefined` when neither. */
export async function readPrompt(flags: CliFlags, io: CliIO): Promise<string | undefined> {
  const argument = flags.positionals.length > 0 ? flags.positionals.join(' ') : undefined;
  if (io.stdinIsTTY !== false || !io.stdin) return argument;
  const piped = await readStdin(io.stdin, argument === undefined ? undefined : Number(io.env.TESSERA_STDIN_WAIT_MS ?? STDIN_WAIT_MS));
  if (piped === undefined) {
    io.stderr(`Warning: no stdin data received in ${Math.round(Number(io.env.TESSERA_STDIN_WAIT_MS ?? STDIN_WAIT_MS) / 1000)}s, proceeding without it.\n`);
    return argument;
  }
  const text = piped.trimEnd();
  if (text === '') return argument;
  return argument === undefined ? text : `${argument}\n\n${text}`;
}

/**
 * All of stdin, capped; `undefined` when `firstDataMs` passes with no data at all (a parent that
 * keeps the pipe open and never writes must not hang a run that has its prompt).
 */
function readStdin(stream: NodeJS.ReadableStream, firstDataMs: number | undefined): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (value: string | undefined, error?: Error): void => {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string): void => {
      clearTimeout(timer);
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      if (size > STDIN_CAP_BYTES) {
        (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
        finish(undefined, new CliUsageError(`Error: stdin is larger than ${STDIN_CAP_BYTES / 1024 / 1024} MB; pass a file path in the prompt instead.`));
        return;
      }
      chunks.push(buffer);
    };
    const onEnd = (): void => finish(Buffer.concat(chunks).toString('utf8'));
    const onError = (error: Error): void => finish(undefined, error);
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    if (firstDataMs !== undefined) {
      timer = setTimeout(() => {
        if (chunks.length > 0) return;
        (stream as NodeJS.ReadableStream & { pause?: () => void }).pause?.();
        finish(undefined);
      }, firstDataMs);
    }
  });
}
