/** A stable error code, its HTTP status, the message and (for a bad body) the field. */
export class HubError extends Error {
  constructor(
    readonly code: string,
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 503,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'HubError';
  }
}
