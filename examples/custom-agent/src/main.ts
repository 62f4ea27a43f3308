import { describeError } from '@tessera/contracts';
import { createKernel, type Kernel } from '@tessera/kernel';
import { chooseProvider, processIO, type CliIO } from '@tessera/preset-cli';
import { parseRelnotesArgs, RelnotesUsageError, USAGE } from './args.js';
import { runPrintMode } from './print-mode.js';
import { releaseNotesPreset } from './release-notes-preset.js';
import { relnotesPresetOptions } from './relnotes-options.js';

const NO_PROVIDER = 'relnotes needs a model. Set ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL for a gateway), or OPENAI_API_KEY / OPENAI_BASE_URL for an OpenAI-compatible server.\n';


/** The `relnotes` command: argv → flags → preset options → kernel → print mode → exit code. */
export async function main(argv: readonly string[], given: Partial<CliIO> & { signal?: AbortSignal } = {}): Promise<number> {
  const { signal, ...overrides } = given;
  const io: CliIO = { ...processIO(), ...overrides };
  let kernel: Kernel | undefined;
  try {
    const flags = parseRelnotesArgs(argv);
    if (flags.help) {
      io.stdout(USAGE);
      return 0;
    }
    // Only the environment picks the model: a repository's settings never choose where keys go.
    const choice = chooseProvider(undefined, {}, io.env);
    if (choice.kind !== 'profile') {
      io.stderr(NO_PROVIDER);
      return 1;
    }
    const options = relnotesPresetOptions(flags, io, { kind: 'profile', name: choice.name, profile: choice.profile });
    kernel = await createKernel({ plugins: releaseNotesPreset(options) });
    return await runPrintMode({ kernel, flags, io, cwd: options.cwd, ...(signal ? { signal } : {}) });
  } catch (error) {
    if (error instanceof RelnotesUsageError) {
      io.stderr(`${error.message}\n`);
      return error.exitCode;
    }
    io.stderr(`relnotes: ${describeError(error)}\n`);
    return 1;
  } finally {
    await kernel?.shutdown().catch(() => undefined);
  }
}
