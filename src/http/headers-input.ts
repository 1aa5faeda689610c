/**
 * Request headers as the adapters receive them: Node's record of lower-case names, or Web `Headers`.
 */

/** Request headers as Node (a record of lower-case names) or the Web (`Headers`) holds them. */
export type HeadersInput = { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

/** The value(s) of header `name` (lower-case), whichever shape `headers` has. */
export function readHeader(headers: HeadersInput, name: string): string | readonly string[] | null | undefined {
  return typeof headers.get === 'function'
    ? (headers as { get(name: string): string | null }).get(name)
    : (headers as Readonly<Record<string, string | readonly string[] | undefined>>)[name];
}
