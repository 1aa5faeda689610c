/**
 * Qualification: before a verifier is measured, it must accept a valid token and refuse each bad
 * one (tampered, wrong issuer, wrong audience, expired); a verifier that does not voids the run.
 */

/** Throws unless `attempt()` fails: a verifier that accepts a bad token aborts the run. */
async function mustReject(label, kind, attempt) {
  let accepted = false;
  try {
    accepted = (await attempt()) !== false;
  } catch {
    accepted = false;
  }
  if (accepted) throw new Error(`${label} accepted a ${kind} token: the benchmark is void`);
}

async function mustAccept(label, attempt) {
  try {
    if ((await attempt()) === false) throw new Error('refused');
  } catch (error) {
    throw new Error(`${label} refused a valid token: ${error?.message ?? error}`);
  }
}

/** Shows that `verify` accepts a valid token and refuses each bad one before it is timed. */
export async function qualify(label, verify, valid, bad, kinds = Object.keys(bad)) {
  await mustAccept(label, () => verify(valid));
  for (const kind of kinds) await mustReject(label, kind, () => verify(bad[kind]));
  return kinds;
}
