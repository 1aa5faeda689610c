/**
 * After the load: settle every creation whose answer was lost when the run stopped, ask the gateway
 * for every link, and read its request log.
 *
 * - Each (tenant, Idempotency-Key) sent is sent once more with the same body: the answer must be
 *   201, a replay of the link already seen for that key (a new link only for a key never answered
 *   with 201). The links are then exactly one per key.
 * - Each link is read back with GET /payment-links/:id: 200 with its amount for its own tenant,
 *   404 for the other tenant.
 * - The request log (one line per request, written by the gateway) is counted by status.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { linkBody } from './traffic.mjs';
import { TENANTS } from './tokens.mjs';

/** Runs `work(item)` for every item, `width` at a time. */
async function pool(items, width, work) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(width, queue.length) }, async () => {
      while (queue.length > 0) await work(queue.shift());
    }),
  );
}

async function send(url, method, path, token, body, key) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': key }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, replayed: response.headers.get('idempotent-replayed') === 'true', body: parsed };
}

/**
 * Settles the creations and reads every link back.
 * @returns the figures of the idempotency and tenant-isolation checks
 */
export async function verifyLinks(url, traffic, tokens) {
  // Every key sent, including those whose only request was cut off when the run stopped.
  const keys = new Map();
  for (const entry of traffic.creations.values())
    keys.set(`${entry.tenant} ${entry.index}`, { tenant: entry.tenant, index: entry.index, seen: entry });
  /** Keys with a creation cut off when a phase stopped: its link may exist though no 201 for it was seen. */
  const cutOff = new Set();
  for (const described of traffic.inFlight) {
    if (described.name !== 'create valid') continue;
    const name = `${described.tenant} ${described.index}`;
    cutOff.add(name);
    if (!keys.has(name)) keys.set(name, { tenant: described.tenant, index: described.index, seen: undefined });
  }

  const figures = {
    keys: keys.size,
    createdDuringRun: 0,
    replayedDuringRun: 0,
    inUseDuringRun: 0,
    createdWhenSettling: 0,
    createdUnseen: 0,
    settledAsReplay: 0,
    settlingFailures: [],
    keysWithSeveralIds: 0,
    linkIds: new Set(),
    readBack: { own200: 0, ownOther: 0, other404: 0, otherOther: 0 },
    requests: 0,
  };
  for (const { seen } of keys.values()) {
    if (seen === undefined) continue;
    figures.createdDuringRun += seen.created;
    figures.replayedDuringRun += seen.replayed;
    figures.inUseDuringRun += seen.inUse;
    if (seen.ids.size > 1 || seen.created > 1) figures.keysWithSeveralIds++;
  }

  const links = [];
  await pool([...keys.entries()], 8, async ([name, { tenant, index, seen }]) => {
    const token = tokens.valid[tenant][0];
    const body = linkBody(tenant, index);
    let answer = await send(url, 'POST', '/payment-links/', token, body, `load-key-${index}`);
    figures.requests++;
    // A request cut off when the run stopped may still hold the key for a moment.
    for (let retry = 0; retry < 5 && answer.status === 409 && answer.body?.code === 'idempotency_key_in_use'; retry++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      answer = await send(url, 'POST', '/payment-links/', token, body, `load-key-${index}`);
      figures.requests++;
    }
    const id = answer.body?.id;
    const known = seen?.id ?? null;
    if (answer.status !== 201 || typeof id !== 'string') {
      figures.settlingFailures.push(`${tenant} key ${index}: ${answer.status} ${answer.body?.code ?? ''}`);
      return;
    }
    if (answer.replayed) figures.settledAsReplay++;
    else figures.createdWhenSettling++;
    if (answer.replayed && (seen?.created ?? 0) === 0) {
      // The link exists, yet no 201 that created it was seen: only a cut-off request may have made it.
      figures.createdUnseen++;
      if (!cutOff.has(name)) figures.settlingFailures.push(`${tenant} key ${index}: link ${id} made by no request seen or cut off`);
    }
    if (known !== null && (!answer.replayed || id !== known)) {
      figures.settlingFailures.push(`${tenant} key ${index}: a second link ${id} beside ${known}`);
    }
    figures.linkIds.add(id);
    links.push({ tenant, id, amount: body.amount });
  });

  await pool(links, 8, async ({ tenant, id, amount }) => {
    const other = TENANTS.find((candidate) => candidate !== tenant);
    const [own, theirs] = await Promise.all([
      send(url, 'GET', `/payment-links/${id}`, tokens.valid[tenant][0]),
      send(url, 'GET', `/payment-links/${id}`, tokens.valid[other][0]),
    ]);
    figures.requests += 2;
    if (own.status === 200 && own.body?.id === id && own.body?.amount === amount) figures.readBack.own200++;
    else figures.readBack.ownOther++;
    if (theirs.status === 404) figures.readBack.other404++;
    else figures.readBack.otherOther++;
  });
  return figures;
}

/** Counts the gateway's request log: lines, statuses, 5xx and internal errors. */
export async function readRequestLog(file) {
  const counts = { requests: 0, byStatus: new Map(), serverErrors: 0, internalErrors: 0 };
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    const match = /^\S+Z (GET|POST|PUT|PATCH|DELETE|OPTIONS|HEAD) \S+ (\d{3}) tenant=\S+ code=(\S+) /.exec(line);
    if (match === null) continue;
    const status = Number(match[2]);
    counts.requests++;
    counts.byStatus.set(status, (counts.byStatus.get(status) ?? 0) + 1);
    if (status >= 500) counts.serverErrors++;
    if (match[3] === 'internal_error') counts.internalErrors++;
  }
  return counts;
}
