import { TesseraError, type ErrorCategory } from '@tessera/contracts';

/** Stable codes for what can go wrong managing bundle plugins. */
export type BundlePluginErrorCode =
  | 'plugin_id_invalid'
  | 'plugin_not_found'
  | 'plugin_not_installed'
  | 'plugin_load_failed'
  | 'plugin_source_unsupported'
  | 'plugin_fetch_failed'
  | 'plugin_sha_mismatch'
  | 'plugin_approval_required'
  | 'marketplace_not_found'
  | 'marketplace_invalid'
  | 'marketplace_fetch_failed'
  | 'marketplace_approval_required'
  | 'settings_write_failed'
  | 'usage';

const CATEGORY: Record<BundlePluginErrorCode, ErrorCategory> = {
  plugin_id_invalid: 'validation',
  plugin_not_found: 'configuration',
  plugin_not_installed: 'state',
  plugin_load_failed: 'validation',
  plugin_source_unsupported: 'configuration',
  plugin_fetch_failed: 'io',
  plugin_sha_mismatch: 'permission',
  plugin_approval_required: 'permission',
  marketplace_not_found: 'configuration',
  marketplace_invalid: 'validation',
  marketplace_fetch_failed: 'io',
  marketplace_approval_required: 'permission',
  settings_write_failed: 'io',
  usage: 'validation',
};

/**
 * Every error the loader, marketplace client and installer throw on purpose. The message says
 * what happened and what to run next; `details` names the plugin, marketplace or file.
 */
export class BundlePluginError extends TesseraError {
  declare readonly code: BundlePluginErrorCode;

  constructor(code: BundlePluginErrorCode, message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    const recoverable = code === 'plugin_fetch_failed' || code === 'marketplace_fetch_failed' || code.endsWith('approval_required');
    super(message, { code, category: CATEGORY[code], recoverable, details, ...(cause === undefined ? {} : { cause }) });
  }
}
