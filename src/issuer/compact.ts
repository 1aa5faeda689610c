/**
 * A compact JWS from a header, claims and a signer (the key store), encoded by `jose`'s base64url.
 */
import { base64url } from 'jose';

const encoder = new TextEncoder();

/** The JOSE header of every token: exactly `alg`, `typ` and `kid`. */
export interface TokenHeader {
  readonly alg: 'RS256';
  readonly typ: 'JWT';
  readonly kid: string;
}

/** Signs `header.claims` with `sign` and joins the three segments. */
export async function signClaims(header: TokenHeader, claims: object, sign: (data: Uint8Array) => Promise<Uint8Array>): Promise<string> {
  const input = `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(claims))}`;
  const signature = await sign(encoder.encode(input));
  return `${input}.${base64url.encode(signature)}`;
}
