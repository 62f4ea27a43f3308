import type * as acp from '@agentclientprotocol/sdk';
import { RequestError } from '@agentclientprotocol/sdk';

/**
 * A `session/prompt`'s content as the one text a Tessera session takes. Text is kept as it is;
 * embedded context (`resource` with text, which the agent advertises) is wrapped in a
 * `<context>` block naming its URI; a resource link is a line naming the file, which the model
 * can Read. Images, audio and binary resources are refused (not advertised): the client should
 * not have sent them, and dropping them silently would answer a different question.
 */
export function promptText(blocks: readonly acp.ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        parts.push(block.text);
        break;
      case 'resource': {
        const resource = block.resource;
        if (!('text' in resource)) throw unsupported(`binary resource ${resource.uri}`);
        parts.push(`<context uri="${resource.uri}">\n${resource.text}\n</context>`);
        break;
      }
      case 'resource_link':
        parts.push(`[${block.name}](${block.uri})`);
        break;
      default:
        throw unsupported(`${block.type} content`);
    }
  }
  return parts.join('\n');
}

function unsupported(what: string): RequestError {
  return RequestError.invalidParams(undefined, `Tessera does not accept ${what} in a prompt (its prompt capabilities are text and embedded text context); send it as text or a resource link.`);
}

/** `/name args` → the command and its arguments; anything else (including `/` alone or a path with spaces before it) → `undefined`. */
export function parseSlashCommand(text: string): { name: string; args: string } | undefined {
  const match = /^\/([A-Za-z0-9][\w:.-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { name: match[1]!, args: (match[2] ?? '').trim() };
}
