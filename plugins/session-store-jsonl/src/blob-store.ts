import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidSessionPathPartError } from './errors.js';

export const BLOB_REF_PREFIX = 'blob:sha256:';
const HEX_64 = /^[0-9a-f]{64}$/;

/** Content-addressed storage for large binary payloads (base64 images) kept out of session files. */
export interface BlobStore {
  /** Stores the bytes and returns their lowercase hex sha256. Idempotent. */
  put(bytes: Uint8Array): string;
  /** The bytes for a hash, or undefined when the blob is missing. */
  get(hash: string): Uint8Array | undefined;
}

export function isBlobRef(value: string): boolean {
  return value.startsWith(BLOB_REF_PREFIX);
}

/**
 * The hash of a `blob:sha256:<hex>` reference. Anything but 64 lowercase hex digits is
 * rejected, because the hash becomes a file name: this is the path-traversal guard.
 */
export function parseBlobRef(ref: string): string {
  const hash = ref.slice(BLOB_REF_PREFIX.length);
  if (!isBlobRef(ref) || !HEX_64.test(hash)) {
    throw new InvalidSessionPathPartError('blob reference', ref, '"blob:sha256:" followed by 64 lowercase hex digits');
  }
  return hash;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Blobs as files `<dir>/<sha256>`, written atomically (temp + rename). */
export class FileBlobStore implements BlobStore {
  constructor(readonly dir: string) {}

  put(bytes: Uint8Array): string {
    const hash = sha256(bytes);
    const target = join(this.dir, hash);
    if (existsSync(target)) return hash;
    mkdirSync(this.dir, { recursive: true });
    const temp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(temp, bytes);
    renameSync(temp, target);
    return hash;
  }

  get(hash: string): Uint8Array | undefined {
    if (!HEX_64.test(hash)) throw new InvalidSessionPathPartError('blob hash', hash, '64 lowercase hex digits');
    try {
      return readFileSync(join(this.dir, hash));
    } catch {
      return undefined;
    }
  }
}

/** Blobs in a map (tests, in-memory sessions). */
export class MemoryBlobStore implements BlobStore {
  readonly blobs = new Map<string, Uint8Array>();

  put(bytes: Uint8Array): string {
    const hash = sha256(bytes);
    this.blobs.set(hash, bytes);
    return hash;
  }

  get(hash: string): Uint8Array | undefined {
    return this.blobs.get(hash);
  }
}
