/** Where and why a JSON text first fails to parse: a small scanner that mirrors JSON.parse. */
export interface JsonSyntaxError {
  offset: number;
  reason: string;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * Returns the first syntax error in `text`, or undefined when it is valid JSON. V8's messages
 * only sometimes carry a position, so located diagnostics come from this scanner instead.
 */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let index = 0;
  const fail = (reason: string): never => {
    throw { offset: index, reason } satisfies JsonSyntaxError;
  };
  const describe = () => (index >= text.length ? 'the end of the file' : `${JSON.stringify(text[index])}`);
  const skip = () => {
    while (index < text.length && WHITESPACE.has(text[index]!)) index += 1;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, index)) index += word.length;
    else fail(`expected a value but found ${describe()}`);
  };
  const string = () => {
    index += 1;
    for (;;) {
      if (index >= text.length) fail('unterminated string');
      const char = text[index]!;
      if (char === '"') return void (index += 1);
      if (char === '\n' || char.charCodeAt(0) < 0x20) fail('line break or control character inside a string');
      if (char === '\\') {
        const next = text[index + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(index + 2, index + 6))) fail('invalid \\u escape');
          index += 6;
          continue;
        }
        if (next === undefined || !'"\\/bfnrt'.includes(next)) fail('invalid escape sequence');
        index += 2;
        continue;
      }
      index += 1;
    }
  };
  const number = () => {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(index, index + 400));
    if (!match) fail(`invalid number starting at ${describe()}`);
    index += match![0].length;
  };
  const value = (): void => {
    skip();
    const char = text[index];
    if (char === '{') return object();
    if (char === '[') return array();
    if (char === '"') return string();
    if (char === 't') return literal('true');
    if (char === 'f') return literal('false');
    if (char === 'n') return literal('null');
    if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) return number();
    fail(`expected a value but found ${describe()}`);
  };
  const object = () => {
    index += 1;
    skip();
    if (text[index] === '}') return void (index += 1);
    for (;;) {
      skip();
      if (text[index] !== '"') fail(`expected a double-quoted property name but found ${describe()} (trailing commas are not allowed)`);
      string();
      skip();
      if (text[index] !== ':') fail(`expected ':' after the property name but found ${describe()}`);
      index += 1;
      value();
      skip();
      if (text[index] === ',') { index += 1; continue; }
      if (text[index] === '}') return void (index += 1);
      fail(`expected ',' or '}' but found ${describe()}`);
    }
  };
  const array = () => {
    index += 1;
    skip();
    if (text[index] === ']') return void (index += 1);
    for (;;) {
      skip();
      if (text[index] === ']') fail('trailing comma before "]"');
      value();
      skip();
      if (text[index] === ',') { index += 1; continue; }
      if (text[index] === ']') return void (index += 1);
      fail(`expected ',' or ']' but found ${describe()}`);
    }
  };
  try {
    value();
    skip();
    if (index < text.length) fail(`unexpected ${describe()} after the end of the JSON value`);
    return undefined;
  } catch (error) {
    if (error && typeof error === 'object' && 'offset' in error) return error as JsonSyntaxError;
    throw error;
  }
}
