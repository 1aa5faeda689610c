import { createVerifier } from 'paygate-auth';

// Hints (what was compared: audiences, kids, a near-miss issuer…) go to your logs, not to callers.
export function createLoggedVerifier(options, log = console.warn) {
  return createVerifier({
    ...options,
    onEvent(event) {
      if (event.type === 'verify_failure') {
        log(
          JSON.stringify({
            msg: 'token rejected',
            code: event.code,
            issuer: event.issuer,
            claim: event.claim,
            hint: event.hint,
          }),
        );
      }
    },
  });
}
