import { matchesKey, type Editor, type TUI } from '@mariozechner/pi-tui';
import type { TextBlock } from './components.js';
import { style } from './theme.js';

/**
 * Ctrl-R: a reverse search through the recent prompts, drawn in the notice row. Enter or Tab
 * puts the match in the prompt; Esc or Ctrl-C leaves it as it was.
 */
export class HistorySearch {
  private historySearch: { query: string; matches: string[]; index: number } | undefined;

  constructor(
    private readonly tui: TUI,
    private readonly noticeRow: TextBlock,
    private readonly editor: Editor,
    /** Recent prompts, newest first. */
    private readonly recentPrompts: () => readonly string[],
  ) {}

  /** True while a search is open (it takes the keys). */
  get active(): boolean {
    return this.historySearch !== undefined;
  }

  open(): void {
    this.historySearch = { query: '', matches: [...this.recentPrompts()], index: 0 };
    this.renderSearch();
  }

  /** One key while the search is open; `key` names Esc, Ctrl-C and Ctrl-D, else it is `data`. */
  onSearchKey(data: string, key: string): { consume: boolean } {
    const search = this.historySearch!;
    if (key === 'escape' || key === 'ctrl+c') {
      this.historySearch = undefined;
      this.noticeRow.setText('');
    } else if (matchesKey(data, 'enter') || matchesKey(data, 'tab')) {
      const chosen = search.matches[search.index];
      this.historySearch = undefined;
      this.noticeRow.setText('');
      if (chosen !== undefined) this.editor.setText(chosen);
    } else if (matchesKey(data, 'ctrl+r')) {
      search.index = Math.min(search.index + 1, Math.max(0, search.matches.length - 1));
      this.renderSearch();
    } else if (matchesKey(data, 'backspace')) {
      search.query = search.query.slice(0, -1);
      this.filterSearch();
    } else if (data.length === 1 && data >= ' ') {
      search.query += data;
      this.filterSearch();
    }
    this.tui.requestRender();
    return { consume: true };
  }

  private filterSearch(): void {
    const search = this.historySearch!;
    const all = this.recentPrompts();
    const query = search.query.toLowerCase();
    search.matches = all.filter((prompt) => prompt.toLowerCase().includes(query));
    search.index = 0;
    this.renderSearch();
  }

  private renderSearch(): void {
    const search = this.historySearch!;
    const match = search.matches[search.index];
    this.noticeRow.setText(`(reverse-i-search)\`${search.query}': ${match === undefined ? style.red('no match') : match.split('\n')[0]}`);
    this.tui.requestRender();
  }
}
