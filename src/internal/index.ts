/**
 * The package's internal shared module: helpers that several of its own areas use and that are not
 * for users. No entry of package.json#exports exposes it, and the boundary check
 * (.dependency-cruiser.cjs) lets every area import it.
 *
 * @module paygate-auth/internal
 */
export { isLoopbackHost } from '../core/loopback.js';
export { deepFreeze } from './deep-freeze.js';
