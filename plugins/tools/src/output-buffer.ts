/**
 * Keeps the start and the end of a stream of text within `maxChars`, dropping the middle,
 * so a command that prints gigabytes costs bounded memory and the model still sees how it
 * began and how it ended.
 */
export class OutputBuffer {
  private head = '';
  private tail = '';
  private total = 0;
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(private readonly maxChars: number) {
    this.headMax = Math.floor(maxChars / 2);
    this.tailMax = maxChars - this.headMax;
  }

  push(text: string): void {
    if (text.length === 0) return;
    this.total += text.length;
    let rest = text;
    if (this.head.length < this.headMax) {
      const take = this.headMax - this.head.length;
      this.head += rest.slice(0, take);
      rest = rest.slice(take);
    }
    if (rest.length > 0) {
      this.tail += rest;
      if (this.tail.length > this.tailMax * 2) this.tail = this.tail.slice(-this.tailMax);
    }
  }

  get totalChars(): number {
    return this.total;
  }

  get truncated(): boolean {
    return this.total > this.maxChars;
  }

  toString(): string {
    if (!this.truncated) return this.head + this.tail;
    const tail = this.tail.slice(-this.tailMax);
    const omitted = this.total - this.head.length - tail.length;
    return `${this.head}\n\n[... ${omitted} characters truncated ...]\n\n${tail}`;
  }
}
