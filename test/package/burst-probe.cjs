// Run by node from the directory holding node_modules/paygate-auth (the unpacked tarball).
// argv[2]: 'require' or 'import'. Verifies two bursts of 64 distinct tokens and 64 tampered ones,
// a second apart (each burst goes to libuv's pool). Prints one JSON line, then must exit on its own.
'use strict';
const [mode] = process.argv.slice(2);
const load = (specifier) => (mode === 'require' ? Promise.resolve(require(specifier)) : import(specifier));

async function main() {
  const { createTestIssuer, createTestVerifier } = await load('paygate-auth/testing');
  const issuer = await createTestIssuer();
  const server = await issuer.listen();
  const verifier = createTestVerifier(issuer);
  await verifier.warmUp();
  await server.close();
  const burst = async (name) => {
    const tokens = await Promise.all(Array.from({ length: 64 }, (_, i) => issuer.token({ jti: `${name}-${i}` })));
    const tampered = tokens.map((token) => `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`);
    return () =>
      Promise.all(
        [...tokens, ...tampered].map((token) =>
          verifier.verify(token).then(
            () => true,
            () => false,
          ),
        ),
      );
  };
  const first = await (await burst('first'))();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const second = await burst('second');
  second().then((verdicts) => {
    const count = (list, from, to) => list.slice(from, to).filter(Boolean).length;
    console.log(
      JSON.stringify({
        first: { valid: count(first, 0, 64), tampered: count(first, 64, 128) },
        second: { valid: count(verdicts, 0, 64), tampered: count(verdicts, 64, 128) },
      }),
    );
  });
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
