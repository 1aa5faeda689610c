/**
 * Which hosts a JWKS may be downloaded from: never a special-purpose address, where a gateway's
 * request would reach this machine, its private network or its cloud's metadata service (SSRF:
 * whoever can register an issuer, or write the registry's table, could otherwise make every
 * instance send requests there). The one home of these rules: the registry applies them to the
 * `jwksUri` it registers, every download to the host it asks for, and on Node the download's own
 * connection to each address a name resolves to (`jwks-node-fetch.ts`).
 *
 * Refused (each a {@link JwksAddressRule}):
 * - `this_network` 0.0.0.0/8 and `::` (on Linux, 0.0.0.0 reaches this machine);
 * - `loopback` 127.0.0.0/8, `::1`, `localhost` and `*.localhost`, except over `http:` to a
 *   loopback host (`http://127.0.0.1:…`, `http://localhost:…`, `http://[::1]:…`: tests and
 *   examples);
 * - `link_local` 169.254.0.0/16 and fe80::/10;
 * - `private` 10.0.0.0/8, 172.16.0.0/12 and 192.168.0.0/16 (RFC 1918), fc00::/7 (unique local),
 *   fec0::/10 (site-local) and 64:ff9b:1::/48 (local-use NAT64);
 * - `shared` 100.64.0.0/10 (carrier-grade NAT, RFC 6598);
 * - `ipv4_mapped` ::ffff:0:0/96 (`[::ffff:127.0.0.1]` reaches 127.0.0.1), whatever it embeds;
 * - `ipv4_compatible` ::/96 (deprecated), beyond `::` and `::1`;
 * - 64:ff9b::/96 (NAT64) when the IPv4 address it embeds is refused, by that address's rule;
 * - `metadata` the cloud metadata services: 169.254.169.254 (AWS, Google Cloud, Azure, Oracle,
 *   DigitalOcean…), 169.254.170.2 (AWS ECS), fd00:ec2::254 (AWS over IPv6), 100.100.100.200
 *   (Alibaba Cloud), 168.63.129.16 (Azure's WireServer, a public address), 192.0.0.192 (Oracle
 *   Cloud Classic), and the names `metadata.google.internal`, `metadata.goog`, `metadata`,
 *   `instance-data`, `instance-data.ec2.internal`, `metadata.tencentyun.com`;
 * - `private_name` names that only a private network resolves: `*.internal`, `*.local`,
 *   `*.home.arpa`, and any name without a dot (resolved through the local search domains).
 *
 * An operator allows a host by name (`jwksAllowedHosts`, `--allow-jwks-host`): its exact host,
 * as a URL names it, then skips every rule here, wherever it resolves.
 *
 * Web APIs only: addresses are parsed here, so the rules hold on every runtime.
 */
import { describe as describeValue } from './options.js';
import { isLoopbackHost } from './loopback.js';
import { quote } from './hint-text.js';

/** Why a JWKS host or address is refused. */
export type JwksAddressRule =
  | 'this_network'
  | 'loopback'
  | 'link_local'
  | 'private'
  | 'shared'
  | 'ipv4_mapped'
  | 'ipv4_compatible'
  | 'metadata'
  | 'private_name';

/** A JWKS host refused, and why. */
export interface JwksAddressRefusal {
  /** The host of the JWKS URL, as the URL names it (IPv6 in brackets). */
  readonly host: string;
  /**
   * What was judged: the host's address (the host itself when it is one, else an address it
   * resolved to), or the host name for a name rule.
   */
  readonly address: string;
  readonly rule: JwksAddressRule;
  /** The range or name that matched: `10.0.0.0/8`, `*.internal`, `metadata.google.internal`. */
  readonly range: string;
}

/** What each rule refuses, for messages. */
const RULE_TEXT: Readonly<Record<JwksAddressRule, string>> = {
  this_network: 'a "this network" address (it reaches this machine)',
  loopback: 'a loopback address (this machine)',
  link_local: 'a link-local address',
  private: 'a private address',
  shared: 'a shared (carrier-grade NAT) address',
  ipv4_mapped: 'an IPv4-mapped IPv6 address',
  ipv4_compatible: 'an IPv4-compatible IPv6 address (deprecated)',
  metadata: 'a cloud metadata service',
  private_name: 'a name that only a private network resolves',
};

interface Ipv4Range {
  readonly base: number;
  readonly mask: number;
  readonly rule: JwksAddressRule;
  readonly range: string;
}

interface Ipv6Range {
  readonly base: bigint;
  readonly mask: bigint;
  readonly rule: JwksAddressRule | 'nat64';
  readonly range: string;
}

const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const HEX_GROUP = /^[0-9a-f]{1,4}$/i;

/** `text` as an unsigned 32-bit number when it is a dotted-quad IPv4 address, else `undefined`. */
function parseIpv4(text: string): number | undefined {
  const parts = DOTTED_QUAD.exec(text);
  if (parts === null) return undefined;
  let value = 0;
  for (const part of parts.slice(1)) {
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

/**
 * `text` as a 128-bit number when it is an IPv6 address (in brackets or not, with `::`, a dotted
 * IPv4 tail or a zone), else `undefined`.
 */
function parseIpv6(text: string): bigint | undefined {
  let rest = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = rest.indexOf('%');
  if (zone >= 0) rest = rest.slice(0, zone);
  if (!rest.includes(':') || rest.length > 45) return undefined;
  const lastColon = rest.lastIndexOf(':');
  const tail = rest.slice(lastColon + 1);
  if (tail.includes('.')) {
    const ipv4 = parseIpv4(tail);
    if (ipv4 === undefined) return undefined;
    rest = `${rest.slice(0, lastColon + 1)}${(ipv4 >>> 16).toString(16)}:${(ipv4 & 0xffff).toString(16)}`;
  }
  const halves = rest.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): string[] => (half === '' ? [] : half.split(':'));
  const head = groupsOf(halves[0] as string);
  const tailGroups = halves.length === 2 ? groupsOf(halves[1] as string) : [];
  const count = head.length + tailGroups.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  const groups = [...head, ...Array<string>(8 - count).fill('0'), ...tailGroups];
  let value = 0n;
  for (const group of groups) {
    if (!HEX_GROUP.test(group)) return undefined;
    value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  }
  return value;
}

function ipv4Range(cidr: string, rule: JwksAddressRule): Ipv4Range {
  const [address, bits] = cidr.split('/') as [string, string];
  const prefix = Number(bits);
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { base: ((parseIpv4(address) as number) & mask) >>> 0, mask, rule, range: cidr };
}

function ipv6Range(cidr: string, rule: Ipv6Range['rule']): Ipv6Range {
  const [address, bits] = cidr.split('/') as [string, string];
  const all = (1n << 128n) - 1n;
  const mask = (all << BigInt(128 - Number(bits))) & all;
  return { base: (parseIpv6(address) as bigint) & mask, mask, rule, range: cidr };
}

/** In order: the first range that holds an address names its rule. */
const IPV4_RANGES: readonly Ipv4Range[] = [
  ipv4Range('169.254.169.254/32', 'metadata'),
  ipv4Range('169.254.170.2/32', 'metadata'),
  ipv4Range('100.100.100.200/32', 'metadata'),
  ipv4Range('168.63.129.16/32', 'metadata'),
  ipv4Range('192.0.0.192/32', 'metadata'),
  ipv4Range('0.0.0.0/8', 'this_network'),
  ipv4Range('127.0.0.0/8', 'loopback'),
  ipv4Range('169.254.0.0/16', 'link_local'),
  ipv4Range('10.0.0.0/8', 'private'),
  ipv4Range('172.16.0.0/12', 'private'),
  ipv4Range('192.168.0.0/16', 'private'),
  ipv4Range('100.64.0.0/10', 'shared'),
];

const IPV6_RANGES: readonly Ipv6Range[] = [
  ipv6Range('::/128', 'this_network'),
  ipv6Range('::1/128', 'loopback'),
  ipv6Range('fd00:ec2::254/128', 'metadata'),
  ipv6Range('::ffff:0:0/96', 'ipv4_mapped'),
  ipv6Range('::/96', 'ipv4_compatible'),
  ipv6Range('64:ff9b::/96', 'nat64'),
  ipv6Range('64:ff9b:1::/48', 'private'),
  ipv6Range('fc00::/7', 'private'),
  ipv6Range('fec0::/10', 'private'),
  ipv6Range('fe80::/10', 'link_local'),
];

/** Cloud metadata services' names. */
const METADATA_NAMES: ReadonlySet<string> = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
]);

/** Suffixes of names only a private network resolves (`.localhost` is loopback). */
const PRIVATE_SUFFIXES: readonly string[] = ['.internal', '.local', '.home.arpa'];

interface Judged {
  readonly rule: JwksAddressRule;
  readonly range: string;
}

function judgeIpv4(value: number): Judged | undefined {
  const hit = IPV4_RANGES.find((range) => (value & range.mask) >>> 0 === range.base);
  return hit === undefined ? undefined : { rule: hit.rule, range: hit.range };
}

function judgeIpv6(value: bigint): Judged | undefined {
  const hit = IPV6_RANGES.find((range) => (value & range.mask) === range.base);
  if (hit === undefined) return undefined;
  if (hit.rule !== 'nat64') return { rule: hit.rule, range: hit.range };
  // NAT64 reaches the IPv4 address it embeds: it is judged as that address.
  const embedded = judgeIpv4(Number(value & 0xffffffffn));
  return embedded === undefined ? undefined : { rule: embedded.rule, range: `${hit.range} embedding ${embedded.range}` };
}

/** The rule an IP address (IPv4 dotted quad, or IPv6 with or without brackets) breaks, if any. */
function judgeAddress(address: string): Judged | undefined {
  const ipv4 = parseIpv4(address);
  if (ipv4 !== undefined) return judgeIpv4(ipv4);
  const ipv6 = parseIpv6(address);
  return ipv6 === undefined ? undefined : judgeIpv6(ipv6);
}

/** `true` when `host` is an IP address rather than a name. */
function isAddress(host: string): boolean {
  return parseIpv4(host) !== undefined || parseIpv6(host) !== undefined;
}

/** The rule a host name (not an address; lower case, as a URL gives it) breaks, if any. */
function judgeName(host: string): Judged | undefined {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === 'localhost' || name.endsWith('.localhost'))
    return { rule: 'loopback', range: name === 'localhost' ? 'localhost' : '*.localhost' };
  if (METADATA_NAMES.has(name)) return { rule: 'metadata', range: name };
  const suffix = PRIVATE_SUFFIXES.find((end) => name.endsWith(end));
  if (suffix !== undefined) return { rule: 'private_name', range: `*${suffix}` };
  if (!name.includes('.')) return { rule: 'private_name', range: 'a name without a dot' };
  return undefined;
}

/** `host` as compared with the allowed hosts: lower case, no trailing dot. */
function hostKey(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** `true` when `url` is `http:` to a loopback host, where loopback addresses are allowed. */
function isLoopbackException(url: URL): boolean {
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/**
 * Why the host of `url` is refused before any connection (an address it names, or a name that is
 * refused as such), or `undefined`: allowed hosts and the `http:` loopback exception pass.
 */
export function screenJwksHost(url: URL, allowedHosts: ReadonlySet<string>): JwksAddressRefusal | undefined {
  const host = url.hostname;
  if (allowedHosts.has(hostKey(host))) return undefined;
  const judged = isAddress(host) ? judgeAddress(host) : judgeName(host);
  if (judged === undefined || (judged.rule === 'loopback' && isLoopbackException(url))) return undefined;
  return { host, address: host, ...judged };
}

/**
 * Why connecting to `address`, which the host of `url` resolved to, is refused, or `undefined`:
 * the check made at connection time, on the address actually connected.
 */
export function screenJwksAddress(url: URL, address: string, allowedHosts: ReadonlySet<string>): JwksAddressRefusal | undefined {
  if (allowedHosts.has(hostKey(url.hostname))) return undefined;
  const judged = judgeAddress(address);
  if (judged === undefined || (judged.rule === 'loopback' && isLoopbackException(url))) return undefined;
  return { host: url.hostname, address, ...judged };
}

/**
 * The refusal as one line: the host, the address, the rule, and what to do (allow the host, if
 * it truly serves the JWKS).
 */
export function describeRefusal(refusal: JwksAddressRefusal): string {
  const { host, address, rule, range } = refusal;
  const verb = address === host ? 'is' : `resolves to ${quote(address)},`;
  return (
    `The JWKS host ${quote(host)} ${verb} ${RULE_TEXT[rule]} (${range}; rule ${rule}): no JWKS is downloaded from a special-purpose address. ` +
    `If this host truly serves the JWKS, allow it by name: jwksAllowedHosts [${quote(host)}] (paygate-auth: --allow-jwks-host ${quote(host)}).`
  );
}

/** A registry entry whose `jwksUri` names a refused host. A `TypeError`, as for any bad entry. */
export class JwksAddressError extends TypeError {
  override readonly name = 'JwksAddressError';
  readonly code = 'jwks_address_refused' as const;
  readonly host: string;
  readonly address: string;
  readonly rule: JwksAddressRule;
  readonly range: string;

  constructor(prefix: string, refusal: JwksAddressRefusal) {
    super(`${prefix}${describeRefusal(refusal)}`);
    this.host = refusal.host;
    this.address = refusal.address;
    this.rule = refusal.rule;
    this.range = refusal.range;
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/**
 * The hosts of option `name`, as URLs name them (lower case, IPv6 in brackets, no trailing dot).
 * @throws {TypeError} naming `owner` and `name` when it is not an array of bare hosts (no scheme,
 *   port, path or wildcard).
 */
export function checkAllowedHosts(owner: string, name: string, value: unknown): ReadonlySet<string> {
  if (value === undefined) return EMPTY;
  if (!Array.isArray(value))
    throw new TypeError(`${owner}: ${name} must be an array of host names or addresses, got ${describeValue(value)}`);
  const hosts = new Set<string>();
  value.forEach((item: unknown, index) => {
    const host = typeof item === 'string' ? canonicalHost(item) : undefined;
    if (host === undefined) {
      throw new TypeError(
        `${owner}: ${name}[${index}] must be a bare host name or IP address (no scheme, port, path or wildcard), got ${describeValue(item)}`,
      );
    }
    hosts.add(host);
  });
  return hosts;
}

/** `text` as a URL's hostname would spell it, or `undefined` when it is not a bare host. */
function canonicalHost(text: string): string | undefined {
  if (text === '' || /[\s/?#@*\\]/.test(text)) return undefined;
  // A bare IPv6 address is bracketed; a name with a port then fails to parse.
  const bracketed = !text.startsWith('[') && text.includes(':') ? `[${text}]` : text;
  let url: URL;
  try {
    url = new URL(`https://${bracketed}/`);
  } catch {
    return undefined;
  }
  if (url.port !== '' || url.hostname === '') return undefined;
  return hostKey(url.hostname);
}
