import { describe, expect, it, vi } from 'vitest';
import {
  type LinkCreatedEvent,
  NotificationTimeoutError,
  type PaymentLink,
  type PaymentLinkHandlerDeps,
} from '../../src/payment-links/index.js';
import {
  CARDIOLOGY_A,
  PAY_PAGE_URL,
  RADIOLOGY_A,
  SHOPPER_A,
  STORE_A,
  STORE_A2,
  TENANT_A,
  jsonRequest,
  makeHandler,
  settledYet,
  useCallers,
  useFakeTimeouts,
  validBody,
} from './support.js';
import { watchUnhandledRejections } from '../support/unhandled-rejections.js';

const callers = useCallers();

describe('POST /payment-links/ creating a link', () => {
  it('answers 201 with Location and every field of the payment link', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), validBody()));
    expect(response.status).toBe(201);
    expect(response.headers).toMatchObject({
      'content-type': 'application/json',
      location: '/payment-links/00000000-0000-4000-8000-000000000001',
    });
    expect(response.body).toEqual({
      id: '00000000-0000-4000-8000-000000000001',
      amount: '125.5000',
      shopper: SHOPPER_A,
      department: CARDIOLOGY_A,
      store: STORE_A,
      currency: 'EUR',
      description: 'Consultation',
      email: 'jane@example.com',
      phone: null,
      expires: '2026-03-15T12:00:00Z',
      sent: '2026-03-01T12:00:00.123456Z',
      status: 'active',
      meta: { order_id: 'A-1001' },
      payment_url: `${PAY_PAGE_URL}/${'code-1'.padEnd(32, 'x')}`,
      allowed_payment_methods: ['mc', 'visa', 'walley', 'mobilepay', 'visa'],
      blocked_payment_methods: [],
    });
  });

  it('returns the amount with exactly four fractional digits whatever precision was sent', async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    for (const [sent, returned] of [
      ['12.5', '12.5000'],
      ['7', '7.0000'],
      ['0.0001', '0.0001'],
      ['10.1234', '10.1234'],
    ]) {
      const response = await handler(jsonRequest(auth, validBody({ amount: sent })));
      expect((response.body as PaymentLink).amount).toBe(returned);
    }
  });

  it('sets expires to now plus duration minutes, to the second', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), validBody({ duration: 90 })));
    expect((response.body as PaymentLink).expires).toBe('2026-03-01T13:30:00Z');
  });

  it('defaults duration to 20160 minutes (14 days)', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), validBody()));
    const link = response.body as PaymentLink;
    expect(Date.parse(link.expires) - Date.parse(link.sent.replace(/\.\d+Z$/, 'Z'))).toBe(20_160 * 60_000);
  });

  it('writes sent with microseconds and expires with seconds, both UTC with Z', async () => {
    const handler = makeHandler({ now: () => Date.UTC(2026, 6, 4, 23, 59, 59, 999) + 0.999 });
    const link = (await handler(jsonRequest(await callers.auth(), validBody({ duration: 1 })))).body as PaymentLink;
    expect(link.sent).toBe('2026-07-04T23:59:59.999999Z');
    expect(link.expires).toBe('2026-07-05T00:00:59Z');
  });

  it('chooses the store configured for the department', async () => {
    const handler = makeHandler();
    const link = (await handler(jsonRequest(await callers.auth(), validBody({ department: '//departments/radiology' }))))
      .body as PaymentLink;
    expect(link).toMatchObject({ department: RADIOLOGY_A, store: STORE_A2 });
  });

  it('registers an unknown shopper once and reuses its UUID', async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    const first = (await handler(jsonRequest(auth, validBody({ shopper: '//customers/new-1' })))).body as PaymentLink;
    const second = (await handler(jsonRequest(auth, validBody({ shopper: '//customers/new-1' })))).body as PaymentLink;
    expect(first.shopper).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.shopper).toBe(first.shopper);
    expect(first.id).not.toBe(second.id);
  });

  it('accepts a phone in place of an e-mail address', async () => {
    const handler = makeHandler();
    const body = validBody({ phone: '+4512345678' });
    delete body.email;
    const link = (await handler(jsonRequest(await callers.auth(), body))).body as PaymentLink;
    expect(link).toMatchObject({ phone: '+4512345678', email: null });
  });

  it('echoes meta as given and {} when none is given', async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    const meta = { order_id: 'A-1', 'odd key': 'ünïcode ✓', empty: '' };
    expect(((await handler(jsonRequest(auth, validBody({ meta })))).body as PaymentLink).meta).toEqual(meta);
    const body = validBody();
    delete body.meta;
    expect(((await handler(jsonRequest(auth, body))).body as PaymentLink).meta).toEqual({});
  });

  it('stores the link under the caller tenant with what the pay page needs', async () => {
    const handler = makeHandler();
    const response = await handler(
      jsonRequest(
        await callers.auth(),
        validBody({
          tokenize: 'yes',
          locale: 'da-DK',
          payment_details: {
            line_items: [
              {
                quantity: 2,
                description: 'Consultation',
                id: 'SKU-1',
                amount_excluding_tax: '100.4',
                tax_percentage: '25',
                tax_amount: '25.1',
                amount_including_tax: '125.5',
              },
            ],
          },
        }),
      ),
    );
    const link = response.body as PaymentLink;
    const stored = await handler.store.get(TENANT_A, link.id);
    expect(stored).toMatchObject({
      tenant: TENANT_A,
      link_code: link.payment_url.slice(PAY_PAGE_URL.length + 1),
      tokenize: 'yes',
      locale: 'da-DK',
      customer_ref: 'c-100',
      payment_details: {
        line_items: [
          {
            quantity: 2,
            description: 'Consultation',
            id: 'SKU-1',
            amount_excluding_tax: '100.4000',
            tax_percentage: '25.0000',
            tax_amount: '25.1000',
            amount_including_tax: '125.5000',
          },
        ],
      },
    });
    expect(await handler.store.getByCode(stored?.link_code ?? '')).toEqual(stored);
  });

  it('hands the new link and its meta as merchant_meta to the notification hook', async () => {
    const events: LinkCreatedEvent[] = [];
    const handler = makeHandler({ onLinkCreated: (event) => void events.push(event) });
    const response = await handler(jsonRequest(await callers.auth(), validBody({ meta: { order_id: 'A-7' } })));
    expect(events).toEqual([{ tenant: TENANT_A, link: response.body, merchant_meta: { order_id: 'A-7' } }]);
  });

  it('keeps the link when the notification hook fails, and reports the failure', async () => {
    const failures: unknown[] = [];
    const handler = makeHandler({
      onLinkCreated: () => Promise.reject(new Error('hub down')),
      onNotificationError: (error) => void failures.push(error),
    });
    const response = await handler(jsonRequest(await callers.auth(), validBody()));
    expect(response.status).toBe(201);
    expect(failures).toEqual([new Error('hub down')]);
    expect(await handler.store.list(TENANT_A)).toHaveLength(1);
  });

  it('answers 201 though onNotificationError throws too (a 500 would make a client without a key create the link twice)', async () => {
    const handler = makeHandler({
      onLinkCreated: () => Promise.reject(new Error('hub down')),
      onNotificationError: () => {
        throw new Error('the logger failed');
      },
    });
    const response = await handler(jsonRequest(await callers.auth(), validBody()));
    expect(response.status).toBe(201);
    expect((await handler.store.list(TENANT_A)).map((link) => link.id)).toEqual([(response.body as PaymentLink).id]);
  });

  it('leaves no unhandled rejection when an async onNotificationError rejects', async () => {
    const unhandled = watchUnhandledRejections();
    try {
      let reported = 0;
      const handler = makeHandler({
        onLinkCreated: () => Promise.reject(new Error('hub down')),
        onNotificationError: async () => {
          reported += 1;
          throw new Error('the logger failed');
        },
      });
      expect((await handler(jsonRequest(await callers.auth(), validBody()))).status).toBe(201);
      await unhandled.settled();
      expect(reported).toBe(1);
      expect(unhandled.reasons).toEqual([]);
    } finally {
      unhandled.stop();
    }
  });

  it('writes a failing hook to console.error when no error handler is given', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const handler = makeHandler({
        onLinkCreated: () => {
          throw new Error('hub down');
        },
      });
      expect((await handler(jsonRequest(await callers.auth(), validBody()))).status).toBe(201);
      expect(spy).toHaveBeenCalledWith(expect.stringContaining('hub down'));
    } finally {
      spy.mockRestore();
    }
  });

  it('writes a failing hook in one line, its message cut and escaped, naming the link kept', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const handler = makeHandler({
        onLinkCreated: () => {
          throw new Error(`hub down\nforged line \u202e\u001b[31m${'x'.repeat(5000)}`);
        },
      });
      const link = (await handler(jsonRequest(await callers.auth(), validBody()))).body as PaymentLink;
      const lines = spy.mock.calls.map(([line]) => String(line));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('hub down\\u000aforged line \\u202e\\u001b[31m');
      expect(lines[0]).toContain(`"${link.id}"`);
      expect(lines[0]?.length).toBeLessThan(1200);
    } finally {
      spy.mockRestore();
    }
  });

  it('makes link codes of at least 128 random bits by default', async () => {
    const handler = makeHandler({ ids: undefined });
    const auth = await callers.auth();
    const codes = new Set<string>();
    for (let i = 0; i < 20; i += 1) {
      const link = (await handler(jsonRequest(auth, validBody()))).body as PaymentLink;
      const code = link.payment_url.slice(PAY_PAGE_URL.length + 1);
      expect(code).toMatch(/^[A-Za-z0-9_-]{32}$/); // 32 base64url characters = 192 bits
      expect(link.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      codes.add(code);
    }
    expect(codes.size).toBe(20);
  });

  it.each([
    ['ids.uuid() returning no UUID', { uuid: () => 'link-1', linkCode: () => 'c'.repeat(32) }, 'ids.uuid()', '"link-1"'],
    [
      'ids.linkCode() returning a code that is not URL-safe',
      { uuid: () => '00000000-0000-4000-8000-000000000001', linkCode: () => 'a/b?c#d'.padEnd(32, 'x') },
      'ids.linkCode()',
      '"a/b?c#d',
    ],
    [
      'ids.linkCode() returning a code too short for 128 random bits',
      { uuid: () => '00000000-0000-4000-8000-000000000001', linkCode: () => 'abc' },
      'ids.linkCode()',
      '"abc"',
    ],
  ])(
    'fails on %s, naming it and the value, storing nothing (a link GET cannot find and no replay can send)',
    async (_label, ids, name, found) => {
      const handler = makeHandler({ ids });
      const created = handler(jsonRequest(await callers.auth(), validBody()));
      await expect(created).rejects.toThrow(name);
      await expect(created).rejects.toThrow(found);
      expect(await handler.store.list(TENANT_A)).toEqual([]);
    },
  );

  it('drops a trailing slash of the pay-page URL', async () => {
    const handler = makeHandler({ payPageUrl: 'https://pay.example.test/l/' });
    const link = (await handler(jsonRequest(await callers.auth(), validBody()))).body as PaymentLink;
    expect(link.payment_url.startsWith('https://pay.example.test/l/code-1')).toBe(true);
  });
});

describe('POST /payment-links/ bounding the notification hook (notificationTimeout)', () => {
  useFakeTimeouts();

  /**
   * A request under way whose hook has been called and settles only when the test says, with a
   * `notificationTimeout` of 2000 ms; `reported` collects what reaches `onNotificationError`.
   */
  async function heldNotification(deps: Partial<PaymentLinkHandlerDeps> = {}) {
    const reported: { readonly error: unknown; readonly event: LinkCreatedEvent }[] = [];
    let called = (): void => {};
    const calledOnce = new Promise<void>((resolve) => {
      called = resolve;
    });
    let settle: (error?: Error) => void = () => {};
    const handler = makeHandler({
      onLinkCreated: () => {
        called();
        return new Promise<void>((resolve, reject) => {
          settle = (error) => (error === undefined ? resolve() : reject(error));
        });
      },
      onNotificationError: (error, event) => void reported.push({ error, event }),
      notificationTimeout: 2000,
      ...deps,
    });
    const responding = handler(jsonRequest(await callers.auth(), validBody()));
    await calledOnce;
    return { handler, responding, reported, settle: (error?: Error) => settle(error) };
  }

  it('answers the 201 of the stored link when the hook never settles, once notificationTimeout has passed', async () => {
    const { handler, responding } = await heldNotification();
    await vi.advanceTimersByTimeAsync(1999);
    expect(await settledYet(responding)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const response = await responding;
    expect(response.status).toBe(201);
    expect((await handler.store.list(TENANT_A)).map((link) => link.id)).toEqual([(response.body as PaymentLink).id]);
  });

  it('reports the timeout to onNotificationError as a NotificationTimeoutError with code notification_timeout', async () => {
    const { responding, reported } = await heldNotification();
    await vi.advanceTimersByTimeAsync(2000);
    const link = (await responding).body as PaymentLink;
    expect(reported).toHaveLength(1);
    expect(reported[0]?.error).toBeInstanceOf(NotificationTimeoutError);
    expect(reported[0]?.error).toMatchObject({ code: 'notification_timeout', timeout: 2000 });
    expect(reported[0]?.event.link).toEqual(link);
  });

  it('writes the timeout to console.error, naming the link kept, when no error handler is given', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const { responding } = await heldNotification({ onNotificationError: undefined });
      await vi.advanceTimersByTimeAsync(2000);
      const link = (await responding).body as PaymentLink;
      const lines = spy.mock.calls.map(([line]) => String(line));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('2000 ms');
      expect(lines[0]).toContain(`"${link.id}"`);
    } finally {
      spy.mockRestore();
    }
  });

  it('reports only the timeout when the hook fails after it (the late failure is dropped, not unhandled)', async () => {
    const { responding, reported, settle } = await heldNotification();
    await vi.advanceTimersByTimeAsync(2000);
    expect((await responding).status).toBe(201);
    settle(new Error('hub down, late'));
    await vi.advanceTimersByTimeAsync(0);
    expect(reported.map(({ error }) => (error as { code?: string }).code)).toEqual(['notification_timeout']);
  });

  it('leaves a hook that settles within the bound unaffected: awaited, nothing reported, no timer left', async () => {
    const { responding, reported, settle } = await heldNotification();
    await vi.advanceTimersByTimeAsync(1999);
    expect(await settledYet(responding)).toBe(false);
    settle();
    expect((await responding).status).toBe(201);
    expect(reported).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('still reports a hook failing within the bound as its own error', async () => {
    const { responding, reported, settle } = await heldNotification();
    await vi.advanceTimersByTimeAsync(1000);
    settle(new Error('hub down'));
    expect((await responding).status).toBe(201);
    expect(reported.map(({ error }) => error)).toEqual([new Error('hub down')]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
