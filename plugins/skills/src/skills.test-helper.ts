import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Diagnostics, type DiagnosticReport } from '@tessera/contracts';
import { createKernel, definePlugin, type Kernel, type Plugin, type PluginInput } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { skills, type SkillsPluginOptions } from './index.js';

/** A project folder and a home folder in a fresh temp dir, and the kernels made over them. */
export class SkillsFixture {
  readonly root = mkdtempSync(join(tmpdir(), 'tessera-skills-'));
  readonly cwd = join(this.root, 'project');
  readonly home = join(this.root, 'home');
  readonly reports: DiagnosticReport[] = [];
  private readonly kernels: Kernel[] = [];

  constructor() {
    mkdirSync(this.cwd, { recursive: true });
    mkdirSync(this.home, { recursive: true });
  }

  /** Writes `text` at `relative` under the project (or `~/…` under home); returns the path. */
  write(relative: string, text: string): string {
    const path = relative.startsWith('~/') ? join(this.home, relative.slice(2)) : join(this.cwd, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  /** A kernel with the test preset, a recording `Diagnostics`, `skills({ home })` and `extra`. */
  async kernel(options: { skills?: SkillsPluginOptions; replace?: Plugin[]; plugins?: PluginInput[] } = {}): Promise<Kernel> {
    const recorder = definePlugin({
      name: 'recording-diagnostics',
      provides: [Diagnostics],
      register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => void this.reports.push(report) }),
    });
    const kernel = await createKernel({
      plugins: testPreset({
        ...(options.replace ? { replace: options.replace } : {}),
        plugins: [recorder, skills({ home: this.home, ...options.skills }), ...(options.plugins ?? [])],
      }),
    });
    this.kernels.push(kernel);
    return kernel;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.kernels.map((kernel) => kernel.shutdown()));
    rmSync(this.root, { recursive: true, force: true });
  }
}

export const skillFile = (frontmatter: Record<string, string>, body: string): string =>
  `---\n${Object.entries(frontmatter).map(([key, value]) => `${key}: ${value}`).join('\n')}\n---\n${body}`;
