/** Which driver failures count as the database being unavailable (503) and which are faults (thrown). */
import { describe, expect, it } from 'vitest';
import { isUnavailable } from '../../src/postgres/index.js';

function withCode(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe('isUnavailable', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset connection', withCode('read ECONNRESET', 'ECONNRESET')],
    ['a connection ended by the server', withCode('Connection terminated unexpectedly')],
    ['a pool that waited too long', withCode('timeout exceeded when trying to connect')],
    ['an administrator shutdown (57P01)', withCode('terminating connection due to administrator command', '57P01')],
    ['a server starting up (57P03)', withCode('the database system is starting up', '57P03')],
    ['too many connections (53300)', withCode('sorry, too many clients already', '53300')],
    ['a serialization failure (40001)', withCode('could not serialize access', '40001')],
    ['a connection failure (08006)', withCode('connection failure', '08006')],
    ['a read-only standby (25006)', withCode('cannot execute INSERT in a read-only transaction', '25006')],
  ])('is true for %s', (_case, error) => {
    expect(isUnavailable(error)).toBe(true);
  });

  it.each([
    ['a missing table (42P01)', withCode('relation "paygate_payment_links" does not exist', '42P01')],
    ['a unique violation (23505)', withCode('duplicate key value violates unique constraint', '23505')],
    ['a bad value (22P02)', withCode('invalid input syntax for type uuid', '22P02')],
    ['a programming error', new TypeError('query is not a function')],
    ['something that is not an error', 'connection lost'],
  ])('is false for %s', (_case, error) => {
    expect(isUnavailable(error)).toBe(false);
  });
});
