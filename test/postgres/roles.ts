/**
 * Database roles for the tests of least privilege and of the audit. Roles belong to the whole
 * PostgreSQL server, not to one database: each name made here is unique (a random suffix), so
 * that test files sharing one server never meet each other's roles.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { TABLES } from '../../src/postgres/schema-names.js';

/** A role name no other test uses: `prefix` and a random suffix. */
export function uniqueRole(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 10)}`;
}

/** `url` (a postgres:// URL) logging in as `role` (trust authentication: no password). */
export function urlAs(url: string, role: string): string {
  const as = new URL(url);
  as.username = role;
  as.password = '';
  return as.toString();
}

/** Creates a role that can log in (and may use the schema `public`), member of `memberOf` if given; its name. */
export async function loginRole(admin: pg.Pool, prefix: string, memberOf: readonly string[] = []): Promise<string> {
  const role = uniqueRole(prefix);
  await admin.query(`CREATE ROLE ${role} LOGIN${memberOf.length === 0 ? '' : ` IN ROLE ${memberOf.join(', ')}`}`);
  await admin.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
  return role;
}

/**
 * Empties the registry table and its audit, as only a superuser can: with the session's triggers
 * off (`session_replication_role = replica`), for the audit refuses `TRUNCATE` to everyone else.
 */
export async function clearRegistry(admin: pg.Pool): Promise<void> {
  const client = await admin.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query(`TRUNCATE ${TABLES.issuers}, ${TABLES.issuerChanges}`);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

/**
 * Empties the operator controls (and `more` tables), as only a superuser can: with the session's
 * triggers off (`session_replication_role = replica`), for the controls refuse `TRUNCATE`, and a
 * `DELETE` that changes the controls in force, to everyone else.
 */
export async function clearControls(admin: pg.Pool, ...more: string[]): Promise<void> {
  const client = await admin.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query(`TRUNCATE ${[TABLES.controls, ...more].join(', ')}`);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

/**
 * Runs `work` with the registry's key check lifted, then puts it back (`NOT VALID`): the state of
 * a database whose rows were written before the schema held that check.
 */
export async function writtenBeforeKeyCheck(admin: pg.Pool, work: () => Promise<unknown>): Promise<void> {
  const constraint = `${TABLES.issuers}_key_is_issuer`;
  await admin.query(`ALTER TABLE ${TABLES.issuers} DROP CONSTRAINT ${constraint}`);
  try {
    await work();
  } finally {
    await admin.query(
      `ALTER TABLE ${TABLES.issuers} ADD CONSTRAINT ${constraint} CHECK (coalesce(entry ->> 'issuer' = issuer, false)) NOT VALID`,
    );
  }
}
