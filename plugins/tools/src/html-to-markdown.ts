const NAMED_ENTITIES: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', copy: '©', reg: '®', trade: '™', hellip: '…',
  mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«', raquo: '»', middot: '·', bull: '•',
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? whole;
  });
}

function attributes(tag: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const match of tag.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
    found[match[1]!.toLowerCase()] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? '');
  }
  return found;
}

function absolute(url: string, base: string | undefined): string {
  if (!base) return url;
  try {
    return new URL(url, base).toString();
  } catch {
    return url;
  }
}

const BLOCK = new Set(['p', 'div', 'section', 'article', 'main', 'header', 'footer', 'nav', 'aside', 'table', 'dl', 'figure', 'form', 'fieldset', 'details', 'summary', 'dd', 'dt']);
const DROPPED = /<(script|style|noscript|template|svg|iframe|canvas|object|head|select|title)\b[\s\S]*?<\/\1\s*>/gi;

/**
 * A small HTML → Markdown converter for WebFetch: headings, paragraphs, links, emphasis, code
 * and pre blocks, lists, block quotes, images, rules and simple tables. Scripts, styles and
 * other non-content elements are dropped. It aims at readable text for a model, not fidelity.
 */
export function htmlToMarkdown(html: string, baseUrl?: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]?.trim();
  const source = html.replace(/<!--[\s\S]*?-->/g, '').replace(DROPPED, '');
  let md = '';
  let preDepth = 0;
  const lists: Array<{ ordered: boolean; index: number }> = [];
  const open: Array<{ tag: string; at: number; href?: string }> = [];
  const block = () => {
    if (!md.endsWith('\n\n')) md += md.endsWith('\n') ? '\n' : '\n\n';
  };
  const line = () => {
    if (!md.endsWith('\n')) md += '\n';
  };

  for (const token of source.split(/(<[^>]*>)/)) {
    if (token.length === 0) continue;
    if (token[0] !== '<' || !/^<\/?[a-zA-Z!]/.test(token)) {
      const text = decodeEntities(token);
      if (preDepth > 0) md += text;
      else {
        const collapsed = text.replace(/\s+/g, ' ');
        md += /[\s(]$|^$/.test(md) || md.endsWith('\n') ? collapsed.replace(/^ /, '') : collapsed;
      }
      continue;
    }
    const closing = token[1] === '/';
    const name = /^<\/?([a-zA-Z][a-zA-Z0-9]*)/.exec(token)?.[1]?.toLowerCase();
    if (!name) continue;
    const heading = /^h([1-6])$/.exec(name);
    if (closing) {
      const index = open.map((entry) => entry.tag).lastIndexOf(name);
      const entry = index === -1 ? undefined : open.splice(index)[0];
      if (heading || BLOCK.has(name)) block();
      else if (name === 'li' || name === 'tr') line();
      else if (name === 'pre') {
        preDepth = Math.max(0, preDepth - 1);
        line();
        md += '```';
        block();
      } else if (name === 'code' && preDepth === 0) md += '`';
      else if (name === 'strong' || name === 'b') md += '**';
      else if (name === 'em' || name === 'i') md += '*';
      else if (name === 'ul' || name === 'ol') {
        lists.pop();
        block();
      }
      if (entry && name === 'a') {
        const label = md.slice(entry.at).trim();
        md = md.slice(0, entry.at) + (entry.href && label ? `[${label}](${entry.href})` : label);
      } else if (entry && name === 'blockquote') {
        const quoted = md.slice(entry.at).trim().split('\n').map((text) => (text ? `> ${text}` : '>')).join('\n');
        md = md.slice(0, entry.at) + quoted;
        block();
      }
      continue;
    }
    const attrs = token.includes('=') ? attributes(token) : {};
    if (heading) {
      block();
      md += `${'#'.repeat(Number(heading[1]))} `;
    } else if (BLOCK.has(name)) block();
    else if (name === 'br') md += '\n';
    else if (name === 'hr') {
      block();
      md += '---';
      block();
    } else if (name === 'pre') {
      block();
      md += '```\n';
      preDepth += 1;
    } else if (name === 'code' && preDepth === 0) md += '`';
    else if (name === 'strong' || name === 'b') md += '**';
    else if (name === 'em' || name === 'i') md += '*';
    else if (name === 'ul' || name === 'ol') {
      block();
      lists.push({ ordered: name === 'ol', index: 0 });
    } else if (name === 'li') {
      line();
      const list = lists[lists.length - 1];
      const indent = '  '.repeat(Math.max(0, lists.length - 1));
      md += list?.ordered ? `${indent}${++list.index}. ` : `${indent}- `;
    } else if (name === 'tr') line();
    else if (name === 'td' || name === 'th') md += md.endsWith('\n') ? '| ' : ' | ';
    else if (name === 'img' && attrs.src) md += `![${attrs.alt ?? ''}](${absolute(attrs.src, baseUrl)})`;
    else if (name === 'blockquote') block();
    if (!token.endsWith('/>') && (name === 'a' || name === 'blockquote')) {
      open.push({ tag: name, at: md.length, ...(name === 'a' && attrs.href && !attrs.href.startsWith('javascript:') ? { href: absolute(attrs.href, baseUrl) } : {}) });
    }
  }
  const body = md
    .split('\n')
    .map((text) => text.replace(/[ \t]+$/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return title && !body.startsWith('# ') ? `# ${decodeEntities(title)}\n\n${body}` : body;
}
