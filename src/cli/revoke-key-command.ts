/**
 * `paygate-auth revoke-key`: revokes one key of an issuer on every instance.
 *
 * @module paygate-auth/cli
 */
import { controlCommand } from './operator-control-command.js';

export const revokeKeyCommand = controlCommand({
  name: 'revoke-key',
  action: 'revoke_key',
  summary: 'revoke one key of an issuer on every instance (PostgreSQL)',
  effect: 'Revokes the key: tokens it signed are refused with key_revoked. A revocation is never lifted;\nthe issuer publishes a new key instead.',
  done: (record) => `Revoked key ${record.kid ?? ''} of ${record.issuer}`,
});
