/**
 * `paygate-auth refresh-keys`: reloads an issuer's JWKS on every instance.
 *
 * @module paygate-auth/cli
 */
import { controlCommand } from './operator-control-command.js';

export const refreshKeysCommand = controlCommand({
  name: 'refresh-keys',
  action: 'refresh_keys',
  summary: "reload an issuer's published keys on every instance (PostgreSQL)",
  effect: "Reloads the issuer's JWKS now (after a key was replaced, say); results verified with keys no\nlonger published are dropped.",
  done: (record) => `Asked every instance to reload the keys of ${record.issuer}`,
});
