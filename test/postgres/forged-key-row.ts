/**
 * A key history row the verifier refuses, as one written before the table refused negative times:
 * its constraint is dropped to write it, then restored `NOT VALID` (new rows are checked again).
 */
import { TABLES } from '../../src/postgres/schema-names.js';

/** Writes `issuer`'s key `by-hand`, first seen at -1, into the key history of `db`. */
export async function writeRefusedKeyRow(db: { query(text: string): Promise<unknown> }, issuer: string): Promise<void> {
  await db.query(`ALTER TABLE ${TABLES.keyHistory} DROP CONSTRAINT ${TABLES.keyHistory}_times`);
  try {
    await db.query(`INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen) VALUES ('${issuer}', 'by-hand', -1)`);
  } finally {
    await db.query(`ALTER TABLE ${TABLES.keyHistory} ADD CONSTRAINT ${TABLES.keyHistory}_times CHECK (first_seen >= 0) NOT VALID`);
  }
}
