/**
 * CORS preflight recognition (Fetch standard §3.2.2), for the adapters' `allowPreflight` option.
 */
import { type HeadersInput, readHeader } from './headers-input.js';

/** The request members {@link isCorsPreflight} reads. */
export interface PreflightCandidate {
  readonly method?: string | undefined;
  readonly headers: HeadersInput;
}

function present(value: string | readonly string[] | null | undefined): boolean {
  if (value === null || value === undefined) return false;
  return typeof value === 'string' ? value.trim() !== '' : value.some((item) => item.trim() !== '');
}

/**
 * `true` for a real CORS preflight: `OPTIONS` carrying both `Origin` and
 * `Access-Control-Request-Method`. Any other request, `OPTIONS` included, is not one.
 */
export function isCorsPreflight(request: PreflightCandidate): boolean {
  return (
    request.method?.toUpperCase() === 'OPTIONS' &&
    present(readHeader(request.headers, 'origin')) &&
    present(readHeader(request.headers, 'access-control-request-method'))
  );
}
