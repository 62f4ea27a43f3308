/** Query parameters that carry a secret in the URLs people paste (GitHub, GitLab, S3, Azure). */
const SECRET_PARAMETER = /([?&](?:access_token|private_token|token|auth|api_key|apikey|key|password|secret|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&#\s'"]+/gi;

/**
 * Hides credentials in every URL inside `text`: the whole userinfo of an http(s) URL
 * (`https://me:ghp_…@host` and `https://ghp_…@host` become `https://***@host`), the password of
 * any other (`ssh://git:pw@host` keeps `git`), and secret query parameters. Messages, listings
 * and error details pass through this; the stored source keeps the token, which it needs to
 * fetch again.
 */
export function redactCredentials(text: string): string {
  return text
    .replace(/\b(https?:\/\/)[^\s/@'"]+@/gi, '$1***@')
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@'"]+):[^\s/@'"]+@/gi, '$1:***@')
    .replace(SECRET_PARAMETER, '$1***');
}
