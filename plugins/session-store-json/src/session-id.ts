// Session ids become file names here; the rule is the one in contracts, shared by every store,
// log and server route. Re-exported so this package's public names stay the same.
export { assertValidSessionId, InvalidSessionIdError, isValidSessionId } from '@tessera/contracts';
