import { matchesKey, SelectList, truncateToWidth, type Component, type Container, type Editor, type TUI } from '@mariozechner/pi-tui';
import { TextBlock } from './components.js';
import type { Terminal } from './terminal.js';
import { selectListTheme, style } from './theme.js';

/** A component shown in place of the prompt; it takes the keys while it is there. */
export interface Overlayable extends Component {
  handleInput(data: string): void;
}

/** One entry of a list to pick from. */
export interface PickItem {
  value: string;
  label: string;
  description?: string;
}

/**
 * The modals that take the prompt's place: permission prompts, pickers, command interactions.
 * One is shown at a time; the others wait their turn, and the prompt comes back after the last.
 */
export class ModalHost {
  private modal: Overlayable | undefined;
  private readonly waitingModals: Overlayable[] = [];

  constructor(
    private readonly tui: TUI,
    private readonly promptArea: Container,
    private readonly editor: Editor,
    private readonly terminal: Terminal,
  ) {}

  /** The modal on screen, if any. */
  get current(): Overlayable | undefined {
    return this.modal;
  }

  /** Opens a modal; while one is open, the next waits its turn (nothing steals a prompt's focus). */
  open(component: Overlayable): void {
    if (this.modal) {
      this.waitingModals.push(component);
      return;
    }
    this.modal = component;
    this.promptArea.clear();
    this.promptArea.addChild(component);
    this.tui.setFocus(component);
    this.tui.requestRender();
  }

  /** Takes a modal away, shown or waiting (an ask withdrawn because its turn was aborted). */
  withdraw(component: Overlayable | undefined): void {
    if (!component) return;
    if (this.modal === component) this.close();
    else {
      const index = this.waitingModals.indexOf(component);
      if (index >= 0) this.waitingModals.splice(index, 1);
    }
  }

  close(): void {
    this.modal = undefined;
    this.promptArea.clear();
    const next = this.waitingModals.shift();
    if (next) {
      this.open(next);
      return;
    }
    this.promptArea.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.tui.requestRender();
  }

  /** A list to pick from; typing filters it by label and description (any part, any case). */
  choose(title: string, items: PickItem[], onPick: (value: string | undefined) => void): void {
    const header = new TextBlock(style.bold(title));
    const visible = Math.max(3, Math.min(10, this.terminal.rows - 6));
    let filter = '';
    const makeList = (): SelectList => {
      const needle = filter.toLowerCase();
      const shown = needle === '' ? items : items.filter((item) => `${item.label} ${item.description ?? ''}`.toLowerCase().includes(needle));
      const created = new SelectList(shown, visible, { ...selectListTheme, noMatch: () => style.gray('  Nothing matches the filter') });
      created.onSelect = (item) => {
        this.close();
        onPick(item.value);
      };
      created.onCancel = () => {
        this.close();
        onPick(undefined);
      };
      return created;
    };
    let list = makeList();
    const picker: Overlayable = {
      render: (width) => [...header.render(width), ...list.render(width), truncateToWidth(style.gray(filter === '' ? 'Type to filter · Enter to choose · Esc to cancel' : `Filter: ${filter}`), width)],
      invalidate: () => list.invalidate(),
      handleInput: (data) => {
        if (matchesKey(data, 'backspace')) {
          filter = filter.slice(0, -1);
          list = makeList();
        } else if (data.length === 1 && data >= ' ' && data !== '\x7f') {
          filter += data;
          list = makeList();
        } else list.handleInput(data);
      },
    };
    this.open(picker);
  }
}
