/**
 * {@link NotificationTimeoutError}: `onLinkCreated` did not settle within the handler's
 * `notificationTimeout`. The link is stored and its 201 sent; the error goes to
 * `onNotificationError` as a failing hook's would.
 */

/** `onLinkCreated` did not settle within `notificationTimeout` milliseconds; its outcome is dropped. */
export class NotificationTimeoutError extends Error {
  override readonly name = 'NotificationTimeoutError';
  readonly code = 'notification_timeout' as const;
  /** The bound that passed, in milliseconds. */
  readonly timeout: number;

  constructor(timeout: number) {
    super(
      `onLinkCreated did not settle within ${timeout} ms (notificationTimeout); the 201 was sent without waiting further, ` +
        'and what the hook does later is not reported: make it hand the event to a queue, or raise notificationTimeout',
    );
    this.timeout = timeout;
  }
}
