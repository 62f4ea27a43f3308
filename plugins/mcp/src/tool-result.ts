import type { ImageBlock, TextBlock, ToolResult } from '@tessera/contracts';

/** The MCP result fields this package reads; anything else a server sends is ignored. */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

/** Data kept on a tool result for UIs and hooks (never sent to the model). */
export interface McpToolResultData {
  server: string;
  tool: string;
  structuredContent?: unknown;
  /** Resource URIs the result mentioned (embedded or linked). */
  resources?: string[];
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * Turns a `tools/call` result into a Tessera tool result. Text stays text; images become image
 * blocks; audio, blobs and links are described in text (providers take no audio); embedded text
 * resources are inlined with their URI. `structuredContent` is sent as JSON text only when the
 * server gave no text. `isError: true` makes a failed result with the server's text as the error.
 * Malformed blocks are described, never thrown on.
 */
export function toToolResult(raw: unknown, server: string, tool: string): ToolResult<McpToolResultData> {
  const result: McpCallResult = isObject(raw) ? raw : {};
  // The common case, one text block and nothing else, without the general walk.
  if (result.isError !== true && result.structuredContent === undefined && Array.isArray(result.content) && result.content.length === 1) {
    const only: unknown = result.content[0];
    if (isObject(only) && only.type === 'text' && typeof only.text === 'string' && only.text !== '') return { success: true, output: only.text, data: { server, tool } };
  }
  const blocks: Array<TextBlock | ImageBlock> = [];
  const resources: string[] = [];
  const content = Array.isArray(result.content) ? result.content : [];
  for (const block of content) {
    if (!isObject(block)) continue;
    switch (block.type) {
      case 'text':
        blocks.push({ type: 'text', text: text(block.text) ?? '' });
        break;
      case 'image': {
        const data = text(block.data);
        const mediaType = text(block.mimeType);
        if (data !== undefined && mediaType !== undefined) blocks.push({ type: 'image', data, mediaType });
        else blocks.push({ type: 'text', text: '[image without data or mimeType]' });
        break;
      }
      case 'audio':
        blocks.push({ type: 'text', text: `[audio ${text(block.mimeType) ?? 'unknown type'}, ${String(text(block.data)?.length ?? 0)} base64 characters, not shown]` });
        break;
      case 'resource_link': {
        const uri = text(block.uri) ?? '';
        resources.push(uri);
        const details = [text(block.name), text(block.mimeType), text(block.description)].filter((part) => part !== undefined && part !== '');
        blocks.push({ type: 'text', text: `[resource link ${uri}${details.length > 0 ? ` — ${details.join(', ')}` : ''}]` });
        break;
      }
      case 'resource': {
        const resource = isObject(block.resource) ? block.resource : {};
        const uri = text(resource.uri) ?? '';
        resources.push(uri);
        const body = text(resource.text);
        if (body !== undefined) blocks.push({ type: 'text', text: `[resource ${uri}]\n${body}` });
        else if (text(resource.blob) !== undefined && (text(resource.mimeType) ?? '').startsWith('image/')) {
          blocks.push({ type: 'image', data: text(resource.blob)!, mediaType: text(resource.mimeType)! });
        } else blocks.push({ type: 'text', text: `[resource ${uri}: ${text(resource.mimeType) ?? 'binary'}, ${String(text(resource.blob)?.length ?? 0)} base64 characters, not shown]` });
        break;
      }
      default:
        blocks.push({ type: 'text', text: `[unsupported content type ${JSON.stringify(block.type)}]` });
    }
  }
  const hasText = blocks.some((block) => block.type === 'text');
  if (!hasText && result.structuredContent !== undefined) blocks.unshift({ type: 'text', text: safeJson(result.structuredContent) });
  const data: McpToolResultData = {
    server,
    tool,
    ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
    ...(resources.length === 0 ? {} : { resources }),
  };
  const output: string | Array<TextBlock | ImageBlock> = blocks.every((block) => block.type === 'text') ? blocks.map((block) => (block as TextBlock).text).join('\n') : blocks;
  if (result.isError === true) {
    const message = blocks.filter((block): block is TextBlock => block.type === 'text').map((block) => block.text).join('\n') || `MCP tool "${tool}" on server "${server}" reported an error without a message.`;
    return { success: false, output: message, error: message, errorCode: 'tool_error', data };
  }
  return { success: true, output: output === '' ? '(no output)' : output, data };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
