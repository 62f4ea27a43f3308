import type { ImageBlock, TextBlock } from '@tessera/contracts';

/** Output text kept per cell output; the rest is cut with a marker. */
const MAX_OUTPUT_CHARS = 10_000;
const IMAGE_OUTPUTS = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
// ANSI colour codes in tracebacks: noise for a model.
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export interface RenderedNotebook {
  blocks: Array<TextBlock | ImageBlock>;
  cells: number;
  language: string | undefined;
}

type Multiline = string | string[] | undefined;

interface NotebookOutput {
  output_type?: string;
  name?: string;
  text?: Multiline;
  data?: Record<string, Multiline>;
  ename?: string;
  evalue?: string;
  traceback?: string[];
}

interface NotebookCell {
  cell_type?: string;
  id?: string;
  source?: Multiline;
  execution_count?: number | null;
  outputs?: NotebookOutput[];
}

function joined(value: Multiline): string {
  return Array.isArray(value) ? value.join('') : typeof value === 'string' ? value : '';
}

function cut(text: string): string {
  return text.length > MAX_OUTPUT_CHARS ? `${text.slice(0, MAX_OUTPUT_CHARS)}\n[output truncated: ${text.length} characters]` : text;
}

/**
 * A Jupyter notebook (nbformat 4) as a model reads it: every cell with its type, id and
 * source, then its outputs — streams, results, errors (tracebacks without colour codes) — with
 * image outputs as image blocks in place. Undefined when `text` is not a notebook, so the
 * caller can fall back to showing the raw file.
 */
export function renderNotebook(text: string, maxImageBytes: number): RenderedNotebook | undefined {
  let notebook: { cells?: unknown; metadata?: { language_info?: { name?: string }; kernelspec?: { language?: string } } };
  try {
    notebook = JSON.parse(text) as typeof notebook;
  } catch {
    return undefined;
  }
  if (!notebook || typeof notebook !== 'object' || !Array.isArray(notebook.cells)) return undefined;
  const language = notebook.metadata?.language_info?.name ?? notebook.metadata?.kernelspec?.language;
  const blocks: Array<TextBlock | ImageBlock> = [];
  let pending = '';
  const write = (line: string) => {
    pending += `${line}\n`;
  };
  const flush = () => {
    if (pending !== '') blocks.push({ type: 'text', text: pending.trimEnd() });
    pending = '';
  };
  const cells = notebook.cells as NotebookCell[];
  cells.forEach((cell, index) => {
    const type = cell.cell_type ?? 'unknown';
    const id = cell.id ? ` id="${cell.id}"` : '';
    const count = typeof cell.execution_count === 'number' ? ` execution_count="${cell.execution_count}"` : '';
    const lang = type === 'code' && language ? ` language="${language}"` : '';
    write(`<cell index="${index + 1}" type="${type}"${id}${count}${lang}>`);
    write(joined(cell.source));
    write('</cell>');
    for (const output of Array.isArray(cell.outputs) ? cell.outputs : []) {
      const kind = output.output_type ?? 'output';
      if (kind === 'stream') {
        write(`<output type="stream" name="${output.name ?? 'stdout'}">\n${cut(joined(output.text))}\n</output>`);
      } else if (kind === 'error') {
        const trace = (output.traceback ?? []).join('\n').replace(ANSI, '');
        write(`<output type="error">\n${cut(`${output.ename ?? 'Error'}: ${output.evalue ?? ''}\n${trace}`.trimEnd())}\n</output>`);
      } else {
        const data = output.data ?? {};
        const image = IMAGE_OUTPUTS.find((mediaType) => joined(data[mediaType]) !== '');
        const plain = joined(data['text/plain']) || joined(data['text/markdown']);
        if (plain) write(`<output type="${kind}">\n${cut(plain)}\n</output>`);
        if (image) {
          const base64 = joined(data[image]).replace(/\s/g, '');
          if ((base64.length * 3) / 4 > maxImageBytes) write(`<output type="${kind}">[${image} image omitted: over ${maxImageBytes} bytes]</output>`);
          else {
            write(`<output type="${kind}" media="${image}">`);
            flush();
            blocks.push({ type: 'image', mediaType: image, data: base64 });
          }
        } else if (!plain && data['text/html'] !== undefined) {
          write(`<output type="${kind}">\n${cut(joined(data['text/html']))}\n</output>`);
        }
      }
    }
  });
  flush();
  if (blocks.length === 0) blocks.push({ type: 'text', text: '<system-reminder>The notebook has no cells.</system-reminder>' });
  return { blocks, cells: cells.length, language };
}
