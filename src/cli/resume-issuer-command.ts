/**
 * `paygate-auth resume-issuer`: lifts suspend-issuer on every instance.
 *
 * @module paygate-auth/cli
 */
import { controlCommand } from './operator-control-command.js';

export const resumeIssuerCommand = controlCommand({
  name: 'resume-issuer',
  action: 'resume_issuer',
  summary: 'lift suspend-issuer on every instance (PostgreSQL)',
  effect: "Resumes the issuer: its tokens verify again (revoked keys stay revoked).",
  done: (record) => `Resumed ${record.issuer}`,
});
