import { TesseraError } from '@tessera/contracts';

/** A topic name that could leave `topics/` or is not a plain file name. */
export class InvalidMemoryTopicError extends TesseraError {
  constructor(topic: unknown, problem: string) {
    super(
      `Invalid memory topic ${JSON.stringify(topic)}: ${problem}. Use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit (for example "build" or "api-conventions").`,
      { code: 'invalid_memory_topic', category: 'validation', recoverable: false, details: { topic } },
    );
  }
}

/** An entry with no text, too much text, or an unknown kind. */
export class InvalidMemoryEntryError extends TesseraError {
  constructor(field: string, problem: string) {
    super(`Invalid memory entry: ${field} ${problem}.`, {
      code: 'invalid_memory_entry',
      category: 'validation',
      recoverable: false,
      details: { field },
    });
  }
}

/** `approve` / `reject` with an id that is not pending. */
export class MemoryCandidateNotFoundError extends TesseraError {
  constructor(id: string, known: readonly string[]) {
    const hint = known.length === 0 ? 'Nothing is pending.' : `Pending ids: ${known.join(', ')}.`;
    super(`No pending memory candidate ${JSON.stringify(id)} (it may have been approved or rejected already). ${hint}`, {
      code: 'memory_candidate_not_found',
      category: 'validation',
      recoverable: false,
      details: { candidateId: id, known },
    });
  }
}

/** A pending file line that is not a candidate; the file and line say where to fix it. */
export class PendingMemoryFileError extends TesseraError {
  constructor(file: string, line: number, problem: string) {
    super(`${file}:${line}: ${problem}. Fix or delete that line (the others are valid JSONL and stay as they are), then try again.`, {
      code: 'pending_memory_file',
      category: 'io',
      recoverable: false,
      details: { file, line },
    });
  }
}

export type UserLocalRootProblem = 'empty' | 'relative' | 'repository-root' | 'inside-repository';

/** The user-local storage root may not be used: it would put workflow state in the repository. */
export class UserLocalStorageRootError extends TesseraError {
  readonly problem: UserLocalRootProblem;

  constructor(problem: UserLocalRootProblem, root: string, repositoryRoot: string | undefined, message: string) {
    super(`${message} Set userLocalStorage({ root }) to an absolute folder outside the repository, such as ~/.tessera.`, {
      code: 'invalid_user_local_root',
      category: 'configuration',
      recoverable: false,
      details: { problem, root, ...(repositoryRoot === undefined ? {} : { repositoryRoot }) },
    });
    this.problem = problem;
  }
}

/** A user-local memory item with an unknown category, a bad key or a value that is not JSON. */
export class InvalidUserLocalMemoryItemError extends TesseraError {
  constructor(field: string, problem: string) {
    super(`Invalid user-local memory item: ${field} ${problem}.`, {
      code: 'invalid_user_local_memory_item',
      category: 'validation',
      recoverable: false,
      details: { field },
    });
  }
}

/** The user-local memory file exists but is not ours to read. */
export class UserLocalMemoryFileError extends TesseraError {
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}. Move the file aside to start an empty user-local memory.`, {
      code: 'user_local_memory_file',
      category: 'io',
      recoverable: false,
      details: { file },
    });
  }
}
