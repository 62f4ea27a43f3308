import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS_DIR, CHROMIUM_FLAGS, DIST_DIR, ensurePageBuilt, findChromium, serveStatic, startTessera, tesseraBuilt, type Running } from './harness.test-helper.js';

// The example page in a real browser (Debian's chromium, driven by playwright-core) against a
// real `tessera serve --provider demo`: a prompt, streamed text, tool rows with their states,
// permission prompts answered with the page's buttons, and the file the demo model wrote.
const executablePath = findChromium();
if (!executablePath) {
  console.warn(`[web-chat] Skipping the browser test: no Chromium at ${process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'}. Install it with "apt-get install -y chromium" (CI does) or set CHROMIUM_PATH.`);
}

const TOKEN = 'web-chat-test-token-0123456789';

describe.skipIf(!executablePath)('web chat example in Chromium', () => {
  let temp: string;
  let workspace: string;
  let site: Running;
  let tessera: Awaited<ReturnType<typeof startTessera>>;
  let context: BrowserContext;
  let page: Page;
  const consoleLines: string[] = [];

  const screenshot = async (name: string): Promise<void> => {
    await page.screenshot({ path: join(ARTIFACTS_DIR, `${name}.png`), fullPage: true });
  };

  beforeAll(async () => {
    if (!tesseraBuilt()) throw new Error('The tessera CLI is not built: run `npm run build` at the repository root first.');
    const build = ensurePageBuilt();
    console.info(`[web-chat] page ${build === 'built' ? 'built with vite' : 'already built'} in ${DIST_DIR}`);
    mkdirSync(ARTIFACTS_DIR, { recursive: true });
    temp = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-web-chat-')));
    workspace = join(temp, 'workspace');
    mkdirSync(join(workspace, 'notes'), { recursive: true });
    mkdirSync(join(temp, 'home'));
    writeFileSync(join(workspace, 'notes', 'groceries.md'), '# Groceries\nApples, bread and coffee.\n');
    writeFileSync(join(workspace, 'notes', 'release.md'), '# Release plan\nTag on Friday, announce on Monday.\n');
    site = await serveStatic(DIST_DIR);
    // A small delay per streamed word, so the page visibly renders partial text.
    tessera = await startTessera({ root: workspace, home: join(temp, 'home'), token: TOKEN, corsOrigin: site.url, demoDelayMs: 30 });
    context = await chromium.launchPersistentContext(join(temp, 'chromium-profile'), { executablePath, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1000, height: 900 } });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (message) => consoleLines.push(`[${message.type()}] ${message.text()}`));
    page.on('pageerror', (error) => consoleLines.push(`[pageerror] ${error.message}`));
  }, 120_000);

  afterAll(async () => {
    if (consoleLines.length > 0) writeFileSync(join(ARTIFACTS_DIR, 'console.log'), `${consoleLines.join('\n')}\n`);
    await context?.close().catch(() => undefined);
    await site?.close();
    await tessera?.close();
    if (temp) rmSync(temp, { recursive: true, force: true });
  });

  /** The next thing the page waits for: a pending permission ask, or the end of the turn. */
  const nextStop = async (): Promise<{ ask: string; tool: string } | { end: string }> => {
    const handle = await page.waitForFunction(
      () => {
        const ask = document.querySelector('[data-part="permission"][data-status="pending"]');
        if (ask) return { ask: ask.getAttribute('data-request-id') ?? '', tool: ask.getAttribute('data-tool-name') ?? '' };
        const status = document.querySelector('header .status')?.getAttribute('data-status');
        return status === 'ready' || status === 'error' ? { end: status } : false;
      },
      undefined,
      { timeout: 30_000 },
    );
    return (await handle.jsonValue()) as { ask: string; tool: string } | { end: string };
  };

  /** Sends a prompt and answers every permission ask of the turn with `button`; returns the asks' tool names. */
  const runTurn = async (prompt: string, button: 'Allow' | 'Deny', first?: () => Promise<void>): Promise<string[]> => {
    await page.getByLabel('Prompt').fill(prompt);
    await page.getByLabel('Prompt').press('Enter');
    await page.locator('header .status:not([data-status="ready"])').waitFor();
    await first?.();
    const asked: string[] = [];
    for (;;) {
      const stop = await nextStop();
      if ('end' in stop) {
        expect(stop.end).toBe('ready');
        return asked;
      }
      asked.push(stop.tool);
      const ask = page.locator(`[data-part="permission"][data-request-id="${stop.ask}"]`);
      if (asked.length === 1) await screenshot(`${button === 'Allow' ? '02' : '04'}-permission-${stop.tool}`);
      await ask.getByRole('button', { name: button, exact: true }).click();
      await page.locator(`[data-part="permission"][data-request-id="${stop.ask}"][data-status="${button === 'Allow' ? 'allowed' : 'denied'}"]`).waitFor();
    }
  };

  it('streams a turn with tool calls; the permission prompts are answered in the page; the demo writes SUMMARY.md', async () => {
    try {
      await page.goto(`${site.url}/?server=${encodeURIComponent(tessera.url)}`);
      await page.getByLabel('Token').fill(TOKEN);
      await page.getByRole('button', { name: 'Start a session' }).click();
      await page.getByLabel('Prompt').waitFor();

      // Record every length the first assistant text has in the DOM: streamed text grows in steps.
      await page.evaluate(() => {
        const lengths: number[] = [];
        (window as unknown as { textLengths: number[] }).textLengths = lengths;
        new MutationObserver(() => {
          const text = document.querySelector('li[data-role="assistant"] [data-part="text"]');
          if (text && lengths.at(-1) !== text.textContent?.length) lengths.push(text.textContent?.length ?? 0);
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      });

      const asked = await runTurn('Summarise my notes, please.', 'Allow', async () => {
        await page.locator('li[data-role="assistant"] [data-part="text"][data-state="streaming"]').first().waitFor();
        await screenshot('01-streaming');
        await page.locator('[data-part="tool"][data-tool-name="Bash"]').waitFor();
      });
      await screenshot('03-done');

      const lengths = await page.evaluate(() => (window as unknown as { textLengths: number[] }).textLengths);
      expect(lengths.length).toBeGreaterThanOrEqual(3);
      expect(asked).toEqual(['Bash', 'Write']);

      const reply = page.locator('li[data-role="assistant"]').last();
      const tools = await reply.locator('[data-part="tool"]').evaluateAll((rows) => rows.map((row) => `${row.getAttribute('data-tool-name')}:${row.getAttribute('data-state')}`));
      expect(tools).toEqual(['Bash:output-available', 'Glob:output-available', 'Read:output-available', 'Read:output-available', 'Write:output-available']);
      expect(await reply.locator('[data-part="text"]').last().textContent()).toContain('Done: SUMMARY.md now lists every note I read');
      expect(await reply.locator('[data-part="permission"]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-status')))).toEqual(['allowed', 'allowed']);

      const summary = readFileSync(join(workspace, 'SUMMARY.md'), 'utf8');
      expect(summary).toContain('# Summary');
      expect(summary).toContain('- Groceries (4 words)');
      expect(summary).toContain('- Release plan (6 words)');

      // A second turn in the same session: the ask is denied, the tool row fails, the model stops.
      expect(await runTurn('And once more.', 'Deny')).toEqual(['Bash']);
      await screenshot('05-denied');
      const second = page.locator('li[data-role="assistant"]').last();
      expect(await second.locator('[data-part="tool"]').evaluateAll((rows) => rows.map((row) => `${row.getAttribute('data-tool-name')}:${row.getAttribute('data-state')}`))).toEqual(['Bash:output-error']);
      expect(await second.locator('[data-part="text"]').last().textContent()).toContain('The Bash call did not go through');
      expect(await page.locator('li[data-role="user"]').count()).toBe(2);
    } catch (error) {
      await screenshot('failure').catch(() => undefined);
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- tessera serve ---\n${tessera.output()}\n--- page console ---\n${consoleLines.join('\n')}`, { cause: error });
    }
  }, 120_000);
});
