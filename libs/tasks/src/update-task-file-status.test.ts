import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isTesseraError } from '@tessera/contracts';
import { updateTaskFileStatus } from './index.js';

let dir: string;
const clock = { now: () => Date.UTC(2025, 2, 4, 23, 30) };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tessera-task-update-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('updateTaskFileStatus', () => {
  it('changes the status value in place, keeping the author style, and starts a Progress section', () => {
    const path = join(dir, 'task.md');
    writeFileSync(path, '# Task\n\n- **Status:** todo\n- **Branch**: feat/x\n\n- [ ] item\n');
    const result = updateTaskFileStatus(path, 'in-progress', { progressMessage: 'Started the parser.', clock });
    expect(result).toEqual({ path, status: 'in-progress', previousStatus: 'todo', progressEntry: '- 2025-03-04: Started the parser.' });
    expect(readFileSync(path, 'utf8')).toBe('# Task\n\n- **Status:** in-progress\n- **Branch**: feat/x\n\n- [ ] item\n\n## Progress\n\n- 2025-03-04: Started the parser.\n');
    expect(readdirSync(dir)).toEqual(['task.md']);
  });

  it('inserts a status line above the other metadata, and appends to an existing Progress section', () => {
    const path = join(dir, 'task.md');
    writeFileSync(path, '# Task\n\n- **Branch**: feat/x\n\n## Progress\n\n- 2025-03-01: Planned.\n\n## Notes\n\ntext\n');
    updateTaskFileStatus(path, 'completed', { progressMessage: 'Verified.', clock });
    expect(readFileSync(path, 'utf8')).toBe(
      '# Task\n\n- **Status**: completed\n- **Branch**: feat/x\n\n## Progress\n\n- 2025-03-01: Planned.\n- 2025-03-04: Verified.\n\n## Notes\n\ntext\n',
    );
  });

  it('inserts under the title when there is no metadata, and writes no progress without a message', () => {
    const path = join(dir, 'task.md');
    writeFileSync(path, '# Task\nBody.\n');
    const result = updateTaskFileStatus(path, 'todo');
    expect(result.progressEntry).toBeUndefined();
    expect(readFileSync(path, 'utf8')).toBe('# Task\n\n- **Status**: todo\nBody.\n');
  });

  it('keeps CRLF line endings', () => {
    const path = join(dir, 'task.md');
    writeFileSync(path, '# Task\r\n\r\n- Status: todo\r\n');
    updateTaskFileStatus(path, 'done');
    expect(readFileSync(path, 'utf8')).toBe('# Task\r\n\r\n- Status: done\r\n');
  });

  it('throws typed errors for a missing file or a multi-line status', () => {
    const missing = join(dir, 'missing.md');
    expect(() => updateTaskFileStatus(missing, 'todo')).toThrow(expect.objectContaining({ code: 'task_file_unreadable', details: { file: missing } }));
    writeFileSync(join(dir, 't.md'), '# T\n');
    try {
      updateTaskFileStatus(join(dir, 't.md'), 'a\nb');
      expect.unreachable();
    } catch (error) {
      expect(isTesseraError(error) && error.code).toBe('invalid_task_update');
    }
  });
});
