/**
 * paygate-auth/issuer: the integration's side of the gateway's contract. Keys on a rotation
 * schedule (a new key every 48 h, published an hour before it signs, kept until its tokens have
 * expired), the JWKS to publish, and tokens signed only when the gateway would accept them.
 * Built on `jose`; runs on Node, Deno, Bun and workerd (`FileKeyStore`, `generateKeyFile` and
 * `readPrivateKeyFile` need Node).
 *
 * @module paygate-auth/issuer
 */
export {
  type CompromiseReport,
  type Issuer,
  type IssuerOptions,
  type JwksResponse,
  type KeyInfo,
  type KeyState,
  type ScheduleTimer,
  type StartReport,
  type SweepReport,
  type TickReport,
  createIssuer,
} from './issuer.js';
export { IssuerError, type IssuerErrorCode, KeyStoreError, type KeyStoreErrorCode } from './errors.js';
export { InMemoryKeyStore, type InMemoryKeyStoreOptions, type KeyRecord, type KeyStore } from './key-store.js';
export { FileKeyStore, type FileKeyStoreOptions } from './file-key-store.js';
export {
  type GenerateKeyFileOptions,
  type PrivateKeyFormat,
  type ReadPrivateKeyFileOptions,
  type SigningKey,
  generateKeyFile,
  readPrivateKeyFile,
} from './key-file.js';
export { type SignTokenOptions, signToken } from './sign-token.js';
export { DEFAULT_ROTATION, type RotationOptions, type RotationPolicy } from './rotation.js';
export type { SignInput, TokenClaims } from './token-claims.js';
export type { TokenHeader } from './compact.js';
export {
  type FastifyReplyLike,
  type JwksSource,
  type NodeRequestLike,
  type NodeResponseLike,
  jwksFastifyHandler,
  jwksFetchHandler,
  jwksNodeHandler,
} from './jwks-handler.js';
