// The scripted answer both servers send: 3 tool calls (one round), then a 40-token answer.
export const TOKEN = 'bench-token-0123456789';
export const ANSWER = Array.from({ length: 40 }, (_, index) => `word${index} `);
export const SCRIPT = {
  turn(index, dir) {
    if (index === 0) return { text: ['Reading ', 'three ', 'files.'], toolCalls: ['a.txt', 'b.txt', 'c.txt'].map((name) => ({ name: 'Read', input: { file_path: `${dir}/${name}` } })) };
    return { text: ANSWER };
  },
};
