import type { Clock, TimerHandle } from '@tessera/contracts';
import type { IBackgroundTaskRequest, IBackgroundTaskWatchdogOptions, TBackgroundTaskTimeoutReason } from './types.js';

export type IBackgroundTaskWatchdogLimits = Required<IBackgroundTaskWatchdogOptions>;

export const DEFAULT_BACKGROUND_WATCHDOG_LIMITS: Readonly<IBackgroundTaskWatchdogLimits> = Object.freeze({
  idleTimeoutMs: 240_000,
  maxRuntimeMs: 0,
  outputLimitBytes: 256 * 1024,
  maxTextDeltas: 20_000,
  repetitionWindow: 800,
  repetitionThreshold: 8,
  staleWorkerCheckMs: 0,
});

/**
 * An agent task's watchdog limits: the defaults, then the runtime's `watchdog` options, then the
 * request's own (each only where it is a non-negative number). Both runtimes use it.
 */
export function watchdogLimits(request: Extract<IBackgroundTaskRequest, { kind: 'agent' }>, runtime: IBackgroundTaskWatchdogOptions = {}): IBackgroundTaskWatchdogLimits {
  const limits: IBackgroundTaskWatchdogLimits = { ...DEFAULT_BACKGROUND_WATCHDOG_LIMITS };
  for (const source of [runtime, request]) {
    for (const key of Object.keys(DEFAULT_BACKGROUND_WATCHDOG_LIMITS) as Array<keyof IBackgroundTaskWatchdogLimits>) {
      const value = (source as IBackgroundTaskWatchdogOptions)[key];
      if (typeof value === 'number' && value >= 0) limits[key] = value;
    }
  }
  // Legacy agent `timeoutMs` is an idle timeout, not a wall-clock cap.
  if (request.idleTimeoutMs === undefined && typeof request.timeoutMs === 'number') limits.idleTimeoutMs = request.timeoutMs;
  return limits;
}

/** Sentences shorter than this are too common ("OK.", "Done.") to count as a loop. */
const MIN_REPEATED_SENTENCE = 12;

export interface IBackgroundTaskWatchdogConfig {
  limits: IBackgroundTaskWatchdogLimits;
  clock: Clock;
  /** Called at most once, with the reason and a message saying what to change. */
  onTrip: (reason: TBackgroundTaskTimeoutReason, message: string) => void;
  isProcessAlive?: (pid: number) => boolean;
}

/** Two sentences repeat each other when they share most of their ending (≥ 80% of the shorter). */
function isRepeat(a: string, b: string): boolean {
  const shorter = Math.min(a.length, b.length);
  if (shorter < MIN_REPEATED_SENTENCE) return false;
  let common = 0;
  while (common < shorter && a[a.length - 1 - common] === b[b.length - 1 - common]) common += 1;
  return common >= Math.max(MIN_REPEATED_SENTENCE, shorter * 0.8);
}

function defaultIsProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Provider-neutral watchdogs of one agent task. Timers go through the injected `Clock`;
 * the idle timer is re-armed lazily (one timer per window, not one per delta).
 */
export class BackgroundTaskWatchdog {
  private lastActivityAt: number;
  private startedAt: number;
  private idleTimer: TimerHandle | undefined;
  private runtimeTimer: TimerHandle | undefined;
  private staleTimer: TimerHandle | undefined;
  private outputBytes = 0;
  private deltas = 0;
  private window = '';
  private lastDelta = '';
  private sameDeltaRun = 0;
  private paused = false;
  private stopped = false;

  constructor(private readonly options: IBackgroundTaskWatchdogConfig) {
    this.startedAt = options.clock.now();
    this.lastActivityAt = this.startedAt;
  }

  get lastActivity(): number {
    return this.lastActivityAt;
  }

  start(pid?: number): void {
    const { limits, clock } = this.options;
    this.startedAt = clock.now();
    this.lastActivityAt = this.startedAt;
    if (limits.idleTimeoutMs > 0) this.armIdle(limits.idleTimeoutMs);
    if (limits.maxRuntimeMs > 0) {
      this.runtimeTimer = clock.setTimeout(
        () => this.trip('max_runtime', `ran longer than maxRuntimeMs (${limits.maxRuntimeMs} ms); raise maxRuntimeMs or split the work.`),
        limits.maxRuntimeMs,
      );
    }
    if (pid !== undefined && limits.staleWorkerCheckMs > 0) this.armStale(pid);
  }

  /** Any runner progress: refreshes the idle window. */
  activity(): void {
    this.lastActivityAt = this.options.clock.now();
  }

  /** While a permission question is open the idle window does not run: a person is thinking. */
  setPaused(paused: boolean): void {
    this.paused = paused;
    this.activity();
  }

  textDelta(delta: string): void {
    if (this.stopped) return;
    this.activity();
    const { limits } = this.options;
    this.deltas += 1;
    this.outputBytes += Buffer.byteLength(delta, 'utf8');
    if (limits.maxTextDeltas > 0 && this.deltas > limits.maxTextDeltas) {
      this.trip('output_limit', `streamed more than maxTextDeltas (${limits.maxTextDeltas}) text deltas; raise maxTextDeltas if this output is expected.`);
      return;
    }
    if (limits.outputLimitBytes > 0 && this.outputBytes > limits.outputLimitBytes) {
      this.trip('output_limit', `streamed more than outputLimitBytes (${limits.outputLimitBytes} bytes); raise outputLimitBytes if this output is expected.`);
      return;
    }
    if (limits.repetitionThreshold > 0) this.checkRepetition(delta, limits);
  }

  stop(): void {
    this.stopped = true;
    const { clock } = this.options;
    for (const timer of [this.idleTimer, this.runtimeTimer, this.staleTimer]) if (timer !== undefined) clock.clearTimeout(timer);
    this.idleTimer = this.runtimeTimer = this.staleTimer = undefined;
  }

  private checkRepetition(delta: string, limits: IBackgroundTaskWatchdogLimits): void {
    const threshold = limits.repetitionThreshold;
    if (delta.trim() !== '') {
      this.sameDeltaRun = delta === this.lastDelta ? this.sameDeltaRun + 1 : 1;
      this.lastDelta = delta;
      if (this.sameDeltaRun >= threshold) {
        this.trip('repetition', `repeated the same output chunk ${threshold} times in a row; the model looks stuck in a loop.`);
        return;
      }
    }
    this.window = (this.window + delta).slice(-limits.repetitionWindow);
    if (!/[.!?\n]/.test(delta)) return;
    // The sentence this delta just finished, compared with every sentence in the window by
    // common suffix, so "Hmm, I will check the file." still repeats "I will check the file."
    const sentences = this.window.split(/(?<=[.!?])\s+|\n+/).map((sentence) => sentence.trim());
    let last = sentences.pop() ?? '';
    if (!/[.!?]$/.test(last)) last = sentences.pop() ?? '';
    if (last.length < MIN_REPEATED_SENTENCE) return;
    let count = 1;
    for (const sentence of sentences) if (isRepeat(sentence, last)) count += 1;
    if (count >= threshold) {
      this.trip('repetition', `repeated the sentence "${last.slice(0, 60)}" ${count} times within ${limits.repetitionWindow} characters; the model looks stuck in a loop.`);
    }
  }

  private armIdle(ms: number): void {
    this.idleTimer = this.options.clock.setTimeout(() => {
      this.idleTimer = undefined;
      if (this.stopped) return;
      const idle = this.options.limits.idleTimeoutMs;
      const quietFor = this.options.clock.now() - this.lastActivityAt;
      if (!this.paused && quietFor >= idle) {
        this.trip('idle', `made no progress for ${idle} ms (idleTimeoutMs); raise idleTimeoutMs for slow work.`);
        return;
      }
      this.armIdle(this.paused ? idle : idle - quietFor);
    }, ms);
  }

  private armStale(pid: number): void {
    const { clock, limits } = this.options;
    const isAlive = this.options.isProcessAlive ?? defaultIsProcessAlive;
    this.staleTimer = clock.setTimeout(() => {
      this.staleTimer = undefined;
      if (this.stopped) return;
      if (!isAlive(pid)) {
        this.trip('stale_worker', `its worker process ${pid} is gone but never reported a result; restart the task.`);
        return;
      }
      this.armStale(pid);
    }, limits.staleWorkerCheckMs);
  }

  /** Public so a runner-reported `worker_stale` goes through the same path. */
  trip(reason: TBackgroundTaskTimeoutReason, message: string): void {
    if (this.stopped) return;
    this.stop();
    this.options.onTrip(reason, message);
  }
}
