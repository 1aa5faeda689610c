/**
 * Requests the shared table sends that `fetch` cannot: several header lines of one name.
 */
import { request } from 'node:http';

export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

/** GET `url` with each `[name, value]` pair sent as its own header line. */
export function getWithHeaderLines(url: string, lines: readonly (readonly [string, string])[]): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: 'GET' }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.on('error', reject);
    });
    const grouped = new Map<string, string[]>();
    for (const [name, value] of lines) grouped.set(name, [...(grouped.get(name) ?? []), value]);
    for (const [name, values] of grouped) outgoing.setHeader(name, values);
    outgoing.on('error', reject);
    outgoing.end();
  });
}
