import { ApprovalHandler, TransportContribution, type ITransportAdapter } from '@tessera/contracts';
import { createKernel, definePlugin, type InteractiveSession, type Kernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalRouter } from './approval-router.js';
import { HostSessions, hostSessionsPlugin } from './session-factory.js';
import { HostedTransport, startTransports, transportPlugin, type TransportHost } from './transport-plugin.js';

let kernel: Kernel | undefined;
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
});

/** A transport that opens one session when it starts, through the host it was given. */
class OpeningTransport implements ITransportAdapter<InteractiveSession> {
  readonly name = 'opening';
  opened: InteractiveSession | undefined;
  constructor(readonly host: TransportHost) {}
  attach(): void {}
  async start(): Promise<void> {
    this.opened = await this.host.sessions.open({ cwd: process.cwd() });
  }
  async stop(): Promise<void> {
    await this.opened?.shutdown();
  }
}

async function compose(withDefaults: boolean): Promise<OpeningTransport> {
  const approvals = new ApprovalRouter();
  kernel = await createKernel({
    plugins: testPreset({
      turns: [],
      plugins: [
        definePlugin({ name: 'router', provides: [ApprovalHandler], register: ({ bind }) => void bind(ApprovalHandler).toConstantValue(approvals) }),
        transportPlugin('opening', (host) => new OpeningTransport(host)),
        ...(withDefaults ? [hostSessionsPlugin((composed) => ({ model: `model-of-${composed === kernel ? 'this-kernel' : 'another'}`, permissionMode: 'plan' as const }))] : []),
      ],
    }),
  });
  const [transport] = kernel.getAll(TransportContribution) as Array<HostedTransport<OpeningTransport>>;
  await transport!.start();
  return transport!.adapter!;
}

describe('transportPlugin and HostSessions', () => {
  it("a transport opens its sessions through the host's HostSessions when bound: every session gets the host's defaults", async () => {
    const transport = await compose(true);
    expect(transport.host.sessions).toBe(kernel!.get(HostSessions));
    expect(transport.opened!.getSession().getModel()).toBe('model-of-this-kernel');
    expect(transport.opened!.getSession().getPermissionMode()).toBe('plan');
    await transport.stop();
  });

  it('without HostSessions it opens plain kernel sessions', async () => {
    const transport = await compose(false);
    expect(kernel!.getOptional(HostSessions)).toBeUndefined();
    expect(transport.opened!.getSession().getPermissionMode()).toBe('default');
    await transport.stop();
  });
});

describe('startTransports', () => {
  it('starts every contributed transport in order; one that fails stops those already started, last first; adapter(name) finds a running one', async () => {
    const log: string[] = [];
    const named = (name: string, fail = false) =>
      transportPlugin(name, () => ({
        name,
        attach() {},
        async start() {
          if (fail) throw new Error(`${name} cannot listen`);
          log.push(`start ${name}`);
        },
        async stop() {
          log.push(`stop ${name}`);
        },
      }));
    const approvals = new ApprovalRouter();
    const router = definePlugin({ name: 'router', provides: [ApprovalHandler], register: ({ bind }) => void bind(ApprovalHandler).toConstantValue(approvals) });
    kernel = await createKernel({ plugins: testPreset({ turns: [], plugins: [router, named('one'), named('two'), named('three', true)] }) });
    await expect(startTransports(kernel)).rejects.toThrow('three cannot listen');
    expect(log).toEqual(['start one', 'start two', 'stop two', 'stop one']);
    await kernel.shutdown();

    log.length = 0;
    kernel = await createKernel({ plugins: testPreset({ turns: [], plugins: [router, named('one'), named('two')] }) });
    const started = await startTransports(kernel);
    expect(started.transports.map((transport) => transport.name)).toEqual(['one', 'two']);
    expect(started.adapter('two')?.name).toBe('two');
    expect(started.adapter('missing')).toBeUndefined();
    await started.stop();
    await started.stop();
    expect(log).toEqual(['start one', 'start two', 'stop two', 'stop one']);
  });
});

