/**
 * `paygate-auth suspend-issuer`: refuses every token of an issuer on every instance.
 *
 * @module paygate-auth/cli
 */
import { controlCommand } from './operator-control-command.js';

export const suspendIssuerCommand = controlCommand({
  name: 'suspend-issuer',
  action: 'suspend_issuer',
  summary: 'refuse every token of an issuer on every instance (PostgreSQL)',
  effect: 'Suspends the issuer: all its tokens are refused with issuer_suspended until resume-issuer.',
  done: (record) => `Suspended ${record.issuer}`,
});
