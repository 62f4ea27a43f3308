// `npm run describe -w @tessera/example-custom-agent`: prints the text the README's
// "What it is made of" block holds.
import { describeReleaseNotesAgent } from './describe-agent.js';

process.stdout.write(await describeReleaseNotesAgent());
