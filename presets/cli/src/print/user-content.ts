import type { ImageBlock, TextBlock } from '@tessera/contracts';
import { isRecord } from './control-channel.js';

/** Image media types the Messages API takes (Claude Code's list). */
export const IMAGE_MEDIA_TYPES: readonly string[] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

/** A stream-json user message's content, read into the kernel's blocks. */
export interface UserContent {
  /** The text blocks joined: what the turn is submitted with (and hooks see as the prompt). */
  text: string;
  /** Text and image blocks in the order given; `undefined` when there is no image. */
  blocks?: Array<TextBlock | ImageBlock>;
  /** Kinds of blocks Tessera does not take yet (documents…), left out of the message. */
  skipped: string[];
}

/**
 * `message.content` of a stream-json `user` line (the Agent SDK's `SDKUserMessage`): a string,
 * or Claude API content blocks. Text blocks and base64 image blocks are taken (an image becomes
 * the kernel's `ImageBlock`); other kinds are named in `skipped`. A block that cannot be sent —
 * an image without data, of an unsupported media type, or with a `url` source, which the
 * kernel's image block cannot carry — is an `error` naming the line and the field: the host
 * gets an error result for the message rather than a turn run without its image. So is a
 * message with nothing to send (`""`, `[]`, blank text, only kinds that are left out): the
 * host reads one result per message it sends, and would otherwise wait for it forever.
 */
export function readUserContent(message: unknown, line: number): UserContent | { error: string } {
  const at = (field: string): string => `stdin line ${line}: message.${field}`;
  if (!isRecord(message) || (typeof message.content !== 'string' && !Array.isArray(message.content))) {
    return { error: `stdin line ${line}: a user message needs message.content (a string or an array of content blocks); the message was not sent.` };
  }
  const content = message.content;
  if (typeof content === 'string') return content.trim() === '' ? nothingToSend(line, content, []) : { text: content, skipped: [] };
  const blocks: Array<TextBlock | ImageBlock> = [];
  const skipped = new Set<string>();
  for (const [index, block] of content.entries()) {
    const field = `content[${index}]`;
    if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') {
      blocks.push({ type: 'text', text: block.text });
      continue;
    }
    if (!isRecord(block) || block.type !== 'image') {
      skipped.add(isRecord(block) && typeof block.type === 'string' ? block.type : 'unknown');
      continue;
    }
    const image = readImage(block, at(field));
    if ('error' in image) return image;
    blocks.push(image);
  }
  const text = blocks
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
  const hasImage = blocks.some((block) => block.type === 'image');
  if (text.trim() === '' && !hasImage) return nothingToSend(line, content, [...skipped]);
  return { text, ...(hasImage ? { blocks } : {}), skipped: [...skipped] };
}

/** A message that would run a turn with an empty prompt: refused, saying what it held. */
function nothingToSend(line: number, content: string | readonly unknown[], skipped: readonly string[]): { error: string } {
  const held =
    typeof content === 'string'
      ? content === ''
        ? 'is an empty string'
        : 'is only whitespace'
      : content.length === 0
        ? 'is an empty array'
        : skipped.length > 0
          ? `has no text or image (only ${skipped.join(', ')} blocks, which are not supported yet)`
          : 'has no text or image (its text blocks are empty)';
  return { error: `stdin line ${line}: message.content ${held}, so there is no prompt; the message was not sent. Send the prompt as a non-empty string, or as text and image blocks.` };
}

function readImage(block: Record<string, unknown>, at: string): ImageBlock | { error: string } {
  const refused = (field: string, problem: string): { error: string } => ({ error: `${at}${field} ${problem}; the message was not sent.` });
  const source = block.source;
  if (!isRecord(source)) return refused('.source', `must be an object such as {"type":"base64","media_type":"image/png","data":"<base64>"}; got ${describe(source)}`);
  if (source.type === 'url') {
    return refused('.source.type', `is "url": images by URL are not supported (the image is sent inline); download it and send {"type":"base64","media_type":"image/png","data":"<base64>"} instead`);
  }
  if (source.type !== 'base64') return refused('.source.type', `must be "base64"; got ${describe(source.type)}`);
  const mediaType = source.media_type;
  if (typeof mediaType !== 'string' || !IMAGE_MEDIA_TYPES.includes(mediaType)) {
    return refused('.source.media_type', `must be one of ${IMAGE_MEDIA_TYPES.join(', ')}; got ${describe(mediaType)}`);
  }
  const data = source.data;
  if (typeof data !== 'string' || data.trim() === '') return refused('.source.data', `must be the image's bytes as a non-empty base64 string; got ${describe(data)}`);
  // A data URL (`data:image/png;base64,…`) is the usual slip: the API wants the bare base64.
  if (!/^[A-Za-z0-9+/\s]+={0,2}\s*$/.test(data)) {
    return refused('.source.data', `is not base64${data.startsWith('data:') ? ' (it is a data URL: send only the part after "base64,")' : ''}`);
  }
  return { type: 'image', data: data.replace(/\s+/g, ''), mediaType };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
