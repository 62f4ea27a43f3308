import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LoopbackCli, userLine } from './loopback-cli.test-helper.js';

// `--max-budget-usd` and `total_cost_usd` count every model call of the run, a subagent's too
// (as Claude Code's do); `usage` stays the main loop's.

let cli: LoopbackCli;
beforeEach(async () => {
  cli = await LoopbackCli.start();
});
afterEach(() => cli.close());

const AGENTS = JSON.stringify({ reviewer: { description: 'Reviews notes', prompt: 'You review notes.', model: 'claude-sonnet-4-5' } });

describe('--max-budget-usd with subagents', () => {
  it("a subagent's model call that reaches the budget ends the run: error_max_budget_usd, its cost in total_cost_usd and modelUsage", async () => {
    // Sonnet at $3 per million input tokens: the reviewer's reply alone costs $3.
    cli.server.reply(
      { toolCalls: [{ name: 'tessera_command_agent', input: { args: 'reviewer Check the notes.' } }] },
      { text: ['The notes are fine.'], model: 'claude-sonnet-4-5', usage: { input_tokens: 1_000_000 } },
      { text: ['Reviewed.'] },
    );
    const run = await cli.run(['-p', 'review', '--output-format', 'json', '--model', 'sonnet', '--allowedTools', 'tessera_command_agent', '--agents', AGENTS, '--max-budget-usd', '0.5']);
    expect(run.code, run.stderr).toBe(1);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ subtype: 'error_max_budget_usd', is_error: true, terminal_reason: 'budget_exhausted', errors: [expect.stringContaining('Reached maximum budget ($0.5)')] });
    expect(result.total_cost_usd).toBeGreaterThanOrEqual(3);
    expect(result.modelUsage['claude-sonnet-4-5']).toMatchObject({ inputTokens: 1_000_000 });
    // `usage` is the main loop's only.
    expect(result.usage.input_tokens).toBeLessThan(1_000_000);
    // No model call after the one that reached the budget.
    expect(cli.server.requests).toHaveLength(2);
  }, 60_000);

  it('under the budget, the subagent is priced in and the run succeeds', async () => {
    cli.server.reply(
      { toolCalls: [{ name: 'tessera_command_agent', input: { args: 'reviewer Check the notes.' } }] },
      { text: ['The notes are fine.'], model: 'claude-sonnet-4-5', usage: { input_tokens: 100_000 } },
      { text: ['Reviewed.'] },
    );
    const run = await cli.run(['-p', 'review', '--output-format', 'json', '--model', 'sonnet', '--allowedTools', 'tessera_command_agent', '--agents', AGENTS, '--max-budget-usd', '5']);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ subtype: 'success', result: 'Reviewed.' });
    // $0.30 for the reviewer's 100k input tokens, plus the main loop's few.
    expect(result.total_cost_usd).toBeGreaterThanOrEqual(0.3);
    expect(result.total_cost_usd).toBeLessThan(0.31);
  }, 60_000);
});

describe('a background subagent that ends between turns', () => {
  it('is priced into the next result (the cost is cumulative), and counts against --max-budget-usd', async () => {
    // Turn 1 stops at --max-turns 1 once the tool call ran, so the only other model call is the
    // background subagent's, which answers after turn 1's result (its 6 frames 100 ms apart).
    cli.server.reply(
      { toolCalls: [{ name: 'tessera_command_agent', input: { args: '--background reviewer Check the notes.' } }] },
      { text: ['The notes are fine.'], model: 'claude-sonnet-4-5', usage: { input_tokens: 100_000 }, delayMs: 100 },
      { text: ['Next.'] },
    );
    const host = cli.host(['--model', 'sonnet', '--max-turns', '1', '--allowedTools', 'tessera_command_agent', '--agents', AGENTS, '--max-budget-usd', '0.2']);
    host.send(userLine('start the review'));
    const first = await host.waitFor((message) => message.type === 'result');
    expect(first.subtype, host.stderr()).toBe('error_max_turns');
    expect(first.total_cost_usd).toBeLessThan(0.3);
    // The subagent's call is answered after the result, before the next message: its stream has
    // ended (then a moment for the CLI to read it).
    while (cli.server.served < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 300));
    host.send(userLine('and now?'));
    const second = await host.waitFor((message) => message.type === 'result' && message !== first);
    // $0.30 for the reviewer's 100k Sonnet input tokens: over the $0.20 budget, so no model call is made.
    expect(second).toMatchObject({ subtype: 'error_max_budget_usd', is_error: true });
    expect(second.total_cost_usd).toBeGreaterThanOrEqual(0.3);
    expect(second.modelUsage['claude-sonnet-4-5']).toMatchObject({ inputTokens: 100_000 });
    expect(cli.server.requests).toHaveLength(2);
    host.end();
    // Stream-json input: the results carry the errors; the process exits 0 when its input ends.
    expect(await host.exit).toBe(0);
  }, 60_000);
});
