/**
 * Reads an AI SDK UI message stream (SSE) to its end; each permission ask that shows up pending
 * is passed once to `answer` while the stream is still open (the turn waits for it).
 */
export async function readTurnAnswering(response: Response, answer: (requestId: string) => Promise<void>): Promise<{ text: string; answered: ReadonlySet<string> }> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const answered = new Set<string>();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    for (const match of text.matchAll(/"requestId":"([^"]+)","status":"pending"/g)) {
      if (answered.has(match[1]!)) continue;
      answered.add(match[1]!);
      await answer(match[1]!);
    }
  }
  return { text, answered };
}
