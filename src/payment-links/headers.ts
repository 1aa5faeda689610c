/**
 * Reading one header from any {@link HeadersLike}.
 */
import type { HeadersLike } from './handler-request.js';

function isWebHeaders(headers: HeadersLike): headers is { get(name: string): string | null } {
  return typeof (headers as { get?: unknown }).get === 'function';
}

/**
 * Every value of header `name` (lower case): `[]` when absent; one entry per header line where the
 * source keeps them apart (Node's `headersDistinct`); a Web `Headers` gives its one joined value.
 */
export function headerValues(headers: HeadersLike | null | undefined, name: string): readonly string[] {
  if (headers === null || headers === undefined) return [];
  if (isWebHeaders(headers)) {
    const value = headers.get(name);
    return value === null ? [] : [value];
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const found: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (key.toLowerCase() !== name) continue;
    if (typeof value === 'string') found.push(value);
    else if (Array.isArray(value)) found.push(...value.filter((item): item is string => typeof item === 'string'));
  }
  return found;
}
