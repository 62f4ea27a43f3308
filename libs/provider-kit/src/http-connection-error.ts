/** The connection failed: before any answer (`connect`, or `timeout` when none came in time) or while reading one (`stream`). */
export class HttpConnectionError extends Error {
  override readonly name = 'HttpConnectionError';
  constructor(
    message: string,
    readonly phase: 'connect' | 'timeout' | 'stream',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
