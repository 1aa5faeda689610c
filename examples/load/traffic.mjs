/**
 * The request mix of the load run and its bookkeeping. Each request is drawn from a weighted list
 * of classes; each class knows which statuses are right for it. Every response is counted by class
 * and status, and each link creation is recorded by (tenant, Idempotency-Key) with the link id it
 * returned and whether it was a replay.
 */
import { TENANTS } from './tokens.mjs';

/** Statuses that accept a request. */
const isAccepted = (status) => status >= 200 && status < 300;

/** A body valid for `tenant`, the same every time for one key index (so that repeats are replays). */
export function linkBody(tenant, index) {
  const units = 10_000n + BigInt(index) * 1_337n;
  const tax = units / 5n;
  const excluding = units - tax;
  const decimal = (value) => `${value / 10_000n}.${String(value % 10_000n).padStart(4, '0')}`;
  const clinic1 = tenant === 'clinic-1';
  return {
    amount: decimal(units),
    currency: index % 3 === 0 ? 'DKK' : 'EUR',
    department: clinic1 ? `//departments/${index % 2 === 0 ? 'cardiology' : 'radiology'}` : '//departments/dermatology',
    shopper: `//customers/load-${index % 64}`,
    ...(clinic1 ? { email: `shopper-${index}@example.com` } : { phone: `+4520${String(100_000 + index).padStart(6, '0')}` }),
    description: `Load run link ${index}`,
    meta: { order_id: `L-${index}`, source: 'load' },
    payment_details: {
      line_items: [
        {
          id: `L-${index}-1`,
          description: 'Treatment',
          quantity: 1,
          amount_excluding_tax: decimal(excluding),
          tax_percentage: '25',
          tax_amount: decimal(tax),
          amount_including_tax: decimal(units),
        },
      ],
    },
  };
}

/** The request classes, with their weight in the mix and the statuses that are right for them. */
export const CLASSES = Object.freeze({
  'info valid': { weight: 20, expected: [200], refused: false },
  'create valid': { weight: 20, expected: [201, 409], refused: false },
  'read own link': { weight: 5, expected: [200], refused: false },
  'create conflicting body': { weight: 4, expected: [409], refused: true },
  'create invalid body': { weight: 4, expected: [400], refused: true },
  "read other tenant's link": { weight: 5, expected: [404], refused: true },
  expired: { weight: 12, expected: [401], refused: true },
  forged: { weight: 16, expected: [401], refused: true },
  'wrong tenant: foreign product': { weight: 6, expected: [401], refused: true },
  'wrong tenant: public creates': { weight: 4, expected: [403], refused: true },
  'wrong scope': { weight: 4, expected: [403], refused: true },
});

const pick = (list) => list[Math.floor(Math.random() * list.length)];

/**
 * The traffic: `request()` describes the next request, `record()` counts its response.
 * @param {Awaited<ReturnType<typeof import('./tokens.mjs').mintTokens>>} tokens
 * @param {{ keys: number }} options key indexes per tenant (0 … keys-1)
 */
export function createTraffic(tokens, { keys }) {
  const schedule = Object.entries(CLASSES).flatMap(([name, { weight }]) => Array(weight).fill(name));
  const tally = new Map(
    Object.keys(CLASSES).map((name) => [name, { count: 0, statuses: new Map(), codes: new Map(), unexpected: 0, accepted: 0 }]),
  );
  /** `tenant key` → { tenant, index, id, created, replayed, inUse, statuses } */
  const creations = new Map();
  /** Link ids seen per tenant, in order of first sight. */
  const ids = new Map(TENANTS.map((tenant) => [tenant, []]));
  const idSet = new Set();
  /** Creations whose link exists, to send conflicting bodies under their keys. */
  const withLink = [];
  const inFlight = new Set();
  let sequence = 0;

  const json = (method, path, token, body, extraHeaders = {}) => ({
    method,
    path,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...extraHeaders,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

  const createRequest = (token, tenant, index, body = linkBody(tenant, index), key = `load-key-${index}`) =>
    json('POST', '/payment-links/', token, body, { 'idempotency-key': key });

  /** One POST or GET with `token`, for the classes that must be refused whatever they ask. */
  const anyRoute = (token) => {
    const index = Math.floor(Math.random() * keys);
    return Math.random() < 0.5 ? json('GET', '/info/', token) : createRequest(token, 'clinic-1', index);
  };

  function describe(name) {
    const tenant = pick(TENANTS);
    const index = Math.floor(Math.random() * keys);
    switch (name) {
      case 'info valid':
        return { name, tenant, ...json('GET', '/info/', pick(tokens.valid[tenant])) };
      case 'create valid':
        return { name, tenant, index, ...createRequest(pick(tokens.valid[tenant]), tenant, index) };
      case 'create conflicting body': {
        // Only for a key whose link exists: the changed body must be refused, the link kept.
        if (withLink.length === 0) return describe('create valid');
        const known = pick(withLink);
        const body = { ...linkBody(known.tenant, known.index), amount: '1.2345', payment_details: undefined };
        return {
          name,
          tenant: known.tenant,
          index: known.index,
          ...createRequest(pick(tokens.valid[known.tenant]), known.tenant, known.index, body),
        };
      }
      case 'create invalid body': {
        // Under keys of their own: a refused body records nothing, so each key may come back.
        const body = { ...linkBody(tenant, index), amount: '12.34567', currency: 'eur' };
        return {
          name,
          tenant,
          ...createRequest(pick(tokens.valid[tenant]), tenant, index, body, `load-invalid-${index}`),
        };
      }
      case 'read own link': {
        const own = ids.get(tenant);
        if (own.length === 0) return describe('info valid');
        const linkId = pick(own);
        return { name, tenant, linkId, ...json('GET', `/payment-links/${linkId}`, pick(tokens.valid[tenant])) };
      }
      case "read other tenant's link": {
        const other = TENANTS.find((candidate) => candidate !== tenant);
        const theirs = ids.get(other);
        const id = theirs.length === 0 ? crypto.randomUUID() : pick(theirs);
        return { name, tenant, ...json('GET', `/payment-links/${id}`, pick(tokens.valid[tenant])) };
      }
      case 'expired':
        return { name, ...anyRoute(pick(tokens.expired)) };
      case 'forged':
        return { name, ...anyRoute(pick(tokens.forged)) };
      case 'wrong tenant: foreign product':
        return { name, ...anyRoute(pick(tokens.foreignProduct)) };
      case 'wrong tenant: public creates':
        return { name, ...createRequest(pick(tokens.publicTenant), 'clinic-1', index) };
      case 'wrong scope':
        return Math.random() < 0.5
          ? { name, ...createRequest(pick(tokens.wrongScopeCreate), 'clinic-1', index) }
          : { name, ...json('GET', '/info/', pick(tokens.noGatewayScope)) };
      default:
        throw new Error(`unknown request class ${name}`);
    }
  }

  /** The next request, drawn from the mix. */
  function request() {
    const described = describe(pick(schedule));
    described.sequence = ++sequence;
    inFlight.add(described);
    return described;
  }

  function noteCreation(described, status, body, headers) {
    const key = `${described.tenant} ${described.index}`;
    let entry = creations.get(key);
    if (entry === undefined) {
      entry = {
        tenant: described.tenant,
        index: described.index,
        id: null,
        created: 0,
        replayed: 0,
        inUse: 0,
        ids: new Set(),
      };
      creations.set(key, entry);
    }
    if (status === 201) {
      const id = body?.id;
      entry.ids.add(id);
      if (entry.id === null) {
        entry.id = id;
        withLink.push(entry);
      }
      if (headers['idempotent-replayed'] === 'true') entry.replayed++;
      else entry.created++;
      if (!idSet.has(id)) {
        idSet.add(id);
        ids.get(described.tenant).push(id);
      }
    } else if (status === 409) {
      entry.inUse++;
    }
  }

  /** Counts one response. */
  function record(described, status, text, headers) {
    inFlight.delete(described);
    const counts = tally.get(described.name);
    counts.count++;
    counts.statuses.set(status, (counts.statuses.get(status) ?? 0) + 1);
    let body;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const code = typeof body?.code === 'string' ? body.code : status < 300 ? '-' : '?';
    counts.codes.set(code, (counts.codes.get(code) ?? 0) + 1);
    const spec = CLASSES[described.name];
    let right = spec.expected.includes(status);
    // A 409 on a valid creation is right only when the same key is still being processed.
    if (described.name === 'create valid' && status === 409) right = code === 'idempotency_key_in_use';
    if (described.name === 'create conflicting body') right = status === 409 && code === 'idempotency_key_reused';
    if (described.name === 'read own link' && status === 200) right = body?.id === described.linkId;
    if (!right) counts.unexpected++;
    if (spec.refused && isAccepted(status)) counts.accepted++;
    if (described.name === 'create valid') noteCreation(described, status, body, headers);
  }

  return { request, record, tally, creations, ids, inFlight, noteCreation };
}
