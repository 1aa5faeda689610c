/**
 * A verifier that trusts the given test issuers, for the audience they mint tokens for, and keeps
 * up with what the test does to them: key changes are seen before the next verification, and each
 * JWKS is fetched wherever its issuer serves it now.
 */
import { type FetchLike, IssuerRegistry, type Verifier, type VerifierOptions, createVerifier } from '../index.js';
import { VERIFIER_OPTION_NAMES, booleanOption, describeValue, functionOption, quote, rejectUnknownOptions } from '../internal/index.js';
import { type IssuerLink, type TestIssuer, issuerLink } from './test-issuer.js';

/**
 * The members of {@link TestVerifierOptions}: the verifier's own (but `registry`, which the test
 * issuers make) and `followIssuers`. Any other is refused, naming the nearest.
 */
const TEST_VERIFIER_OPTION_NAMES: ReadonlySet<string> = new Set([
  ...[...VERIFIER_OPTION_NAMES].filter((name) => name !== 'registry'),
  'followIssuers',
]);

/** Verifier options for {@link createTestVerifier}: `registry` comes from the issuers. */
export type TestVerifierOptions = Omit<VerifierOptions, 'registry' | 'audience'> & {
  /**
   * The audience (or audiences) the verifier accepts, as `createVerifier`'s `audience`.
   * @default the first issuer's audience
   */
  readonly audience?: string | readonly string[] | undefined;
  /**
   * Keep up with the issuers. `true`: before a verification, the keys of every issuer whose JWKS
   * changed since (`rotate()`, `retire()`, `addKey()`, `publish()`, `unpublish()`) are reloaded,
   * as an operator calls `verifier.refresh(issuer)` after a rotation, so a rotation or retirement
   * takes effect at once, with no max-age or kid-miss cooldown to wait out; and each JWKS is
   * fetched where its issuer serves it now (its msw URL, or `listen()`'s loopback server, in
   * whichever order they were set up). `false`: the production rules alone (max-age, the 30 s
   * kid-miss cooldown), to test those rules; the registry then holds each issuer's `entry` as it
   * is now.
   * @default true
   */
  readonly followIssuers?: boolean | undefined;
};

interface Followed {
  readonly issuer: TestIssuer;
  readonly link: IssuerLink;
  seen: number;
}

function issuerList(issuers: TestIssuer | readonly TestIssuer[]): readonly TestIssuer[] {
  const list: readonly TestIssuer[] = Array.isArray(issuers) ? issuers : [issuers as TestIssuer];
  if (list.length === 0) throw new TypeError('createTestVerifier: give at least one test issuer, got an empty array');
  list.forEach((issuer, index) => {
    if (typeof issuer !== 'object' || issuer === null) {
      throw new TypeError(
        `createTestVerifier: issuers[${index}] must be a test issuer from createTestIssuer(), got ${describeValue(issuer)}`,
      );
    }
    // One not made by createTestIssuer() is taken by its entry: without one, it is most likely an
    // issuer's entry given in its place. A kit issuer's entry is not read here: reading it before
    // listen() would warn that a verifier holds its msw URL, and this one follows listen().
    if (issuerLink(issuer) !== undefined) return;
    const { entry } = issuer as { entry?: unknown };
    if (typeof entry !== 'object' || entry === null) {
      throw new TypeError(
        `createTestVerifier: issuers[${index}] must be a test issuer from createTestIssuer(), got an object without entry ` +
          '(a registry entry, issuer.entry?): pass the issuer itself',
      );
    }
  });
  refuseSharedIssuers(list);
  return list;
}

/**
 * @throws {TypeError} naming both places and the `iss` when two issuers made by
 * createTestIssuer() share one: each defaults to `https://issuer.test`, and the registry would
 * refuse the second without saying which option to set.
 */
function refuseSharedIssuers(list: readonly TestIssuer[]): void {
  const seen = new Map<string, number>();
  list.forEach((issuer, index) => {
    if (issuerLink(issuer) === undefined) return;
    const first = seen.get(issuer.issuer);
    if (first === undefined) {
      seen.set(issuer.issuer, index);
      return;
    }
    throw new TypeError(
      `createTestVerifier: issuers[${index}] has the iss of issuers[${first}], got ${quote(issuer.issuer)} for both: ` +
        "give each createTestIssuer() its own issuer option (createTestIssuer({ issuer: 'https://beta.test', product: 'beta' }))",
    );
  });
}

/**
 * A `fetch` that sends each issuer's registered JWKS URL to where the issuer serves it now. The
 * verifier fetches a URL as `URL#href` writes it (host in lower case, no default port), so the
 * registered URLs are looked up in that spelling.
 */
function followingFetch(followed: readonly Followed[], base: FetchLike | undefined): FetchLike {
  const byUri = new Map(followed.map(({ issuer, link }) => [new URL(link.registeredJwksUri).href, issuer] as const));
  return (input, init) => (base ?? globalThis.fetch)(byUri.get(input)?.jwksUri ?? input, init);
}

/** `inner`, whose `verify()` and `verifyNow()` first reload the keys of every issuer whose JWKS changed. */
function following(inner: Verifier, followed: readonly Followed[]): Verifier {
  let syncing: Promise<void> | null = null;
  const sync = (): Promise<void> | null => {
    const changed = followed.filter((entry) => entry.link.revision() !== entry.seen);
    if (changed.length === 0) return syncing;
    const refreshes = changed.map((entry) => {
      entry.seen = entry.link.revision();
      // A failed reload leaves the verifier's own rules to answer the verification.
      return inner.refresh(entry.issuer.issuer).then(
        () => undefined,
        () => undefined,
      );
    });
    const done: Promise<void> = Promise.all([syncing, ...refreshes]).then(() => {
      if (syncing === done) syncing = null;
    });
    syncing = done;
    return done;
  };
  return {
    async verify(token) {
      const pending = sync();
      if (pending !== null) await pending;
      return inner.verify(token);
    },
    verifyNow(token) {
      const pending = sync();
      return pending === null ? inner.verifyNow(token) : pending.then(() => inner.verifyNow(token));
    },
    holds: (token) => inner.holds(token),
    refresh: (issuer) => inner.refresh(issuer),
    revokeKey: (issuer, kid) => inner.revokeKey(issuer, kid),
    suspendIssuer: (issuer) => inner.suspendIssuer(issuer),
    resumeIssuer: (issuer) => inner.resumeIssuer(issuer),
    warmUp: () => inner.warmUp(),
    exportKeys: () => inner.exportKeys(),
    keyHistory: () => inner.keyHistory(),
    keyHistoryChanges: (after) => inner.keyHistoryChanges(after),
    mergeKeyHistory: (entries, options) => inner.mergeKeyHistory(entries, options),
    setRegistry: (registry) => inner.setRegistry(registry),
    reportRefusal: inner.reportRefusal,
    get registry() {
      return inner.registry;
    },
    audiences: inner.audiences,
    maxTokenBytes: inner.maxTokenBytes,
  };
}

/**
 * A verifier whose registry holds exactly `issuers`, for the first one's audience, on a clock
 * read at every call (`Date.now()`, so fake timers apply) unless `now` is given. By default it
 * keeps up with the issuers (see {@link TestVerifierOptions.followIssuers}).
 */
export function createTestVerifier(issuers: TestIssuer | readonly TestIssuer[], options: TestVerifierOptions = {}): Verifier {
  const given = (options ?? {}) as { registry?: unknown };
  if (given.registry !== undefined) {
    // A verifier option, left out on purpose: "unknown option" would read as a misspelling.
    throw new TypeError(
      `createTestVerifier: registry is made from the issuers given, got ${describeValue(given.registry)}: pass the issuers ` +
        '(createTestVerifier([a, b])), or build the verifier with createVerifier({ registry })',
    );
  }
  rejectUnknownOptions('createTestVerifier', options, TEST_VERIFIER_OPTION_NAMES);
  const list = issuerList(issuers);
  const { followIssuers, audience, now, fetch, ...rest } = options;
  booleanOption('createTestVerifier', 'followIssuers', followIssuers, true);
  // Checked here: when following, the verifier gets a wrapper, and a bad one failed every download as 503.
  functionOption('createTestVerifier', 'fetch', fetch);
  const base = { ...rest, audience: audience ?? (list[0] as TestIssuer).audience, now: now ?? (() => Date.now()) };
  if (followIssuers === false) {
    return createVerifier({
      ...base,
      ...(fetch === undefined ? {} : { fetch }),
      registry: new IssuerRegistry(list.map((issuer) => issuer.entry)),
    });
  }
  const followed: Followed[] = [];
  const entries = list.map((issuer) => {
    const link = issuerLink(issuer);
    if (link === undefined) return issuer.entry; // not made by createTestIssuer(): taken as it is
    followed.push({ issuer, link, seen: link.revision() });
    return link.entry();
  });
  // The registry first: it names a malformed JWKS URL, which followingFetch() then reads.
  const registry = new IssuerRegistry(entries);
  const inner = createVerifier({ ...base, fetch: followingFetch(followed, fetch), registry });
  return following(inner, followed);
}
