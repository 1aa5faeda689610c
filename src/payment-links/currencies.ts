/**
 * The ISO 4217 currency codes a payment link may be created in.
 *
 * Source: ISO 4217 "List one" (current currency and funds codes) as published by the
 * maintenance agency on 2025-05-12 ({@link ISO_4217_PUBLISHED}). Withdrawn codes (`ANG`,
 * `CUC`, `HRK`, `SLL`, `ZWL`…) are not in it. Update this file when the agency publishes an
 * amendment; the list is data, not logic.
 */

/** The publication date of the list below. */
export const ISO_4217_PUBLISHED = '2025-05-12';

/** Every alphabetic code of ISO 4217 List one, in alphabetical order. */
export const ISO_4217_CODES: readonly string[] = Object.freeze([
  'AED', 'AFN', 'ALL', 'AMD', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BGN',
  'BHD', 'BIF', 'BMD', 'BND', 'BOB', 'BOV', 'BRL', 'BSD', 'BTN', 'BWP', 'BYN', 'BZD', 'CAD',
  'CDF', 'CHE', 'CHF', 'CHW', 'CLF', 'CLP', 'CNY', 'COP', 'COU', 'CRC', 'CUP', 'CVE', 'CZK',
  'DJF', 'DKK', 'DOP', 'DZD', 'EGP', 'ERN', 'ETB', 'EUR', 'FJD', 'FKP', 'GBP', 'GEL', 'GHS',
  'GIP', 'GMD', 'GNF', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF', 'IDR', 'ILS', 'INR', 'IQD',
  'IRR', 'ISK', 'JMD', 'JOD', 'JPY', 'KES', 'KGS', 'KHR', 'KMF', 'KPW', 'KRW', 'KWD', 'KYD',
  'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'LYD', 'MAD', 'MDL', 'MGA', 'MKD', 'MMK', 'MNT',
  'MOP', 'MRU', 'MUR', 'MVR', 'MWK', 'MXN', 'MXV', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO', 'NOK',
  'NPR', 'NZD', 'OMR', 'PAB', 'PEN', 'PGK', 'PHP', 'PKR', 'PLN', 'PYG', 'QAR', 'RON', 'RSD',
  'RUB', 'RWF', 'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD', 'SHP', 'SLE', 'SOS', 'SRD', 'SSP',
  'STN', 'SVC', 'SYP', 'SZL', 'THB', 'TJS', 'TMT', 'TND', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS',
  'UAH', 'UGX', 'USD', 'USN', 'UYI', 'UYU', 'UYW', 'UZS', 'VED', 'VES', 'VND', 'VUV', 'WST',
  'XAD', 'XAF', 'XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XCD', 'XCG', 'XDR', 'XOF', 'XPD',
  'XPF', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX', 'YER', 'ZAR', 'ZMW', 'ZWG',
]);

/**
 * Codes of List one that name no currency a shopper can pay in: `XXX` ("no currency") and `XTS`
 * (reserved for testing).
 */
export const NON_PAYMENT_CODES: readonly string[] = Object.freeze(['XXX', 'XTS']);

const PAYABLE: ReadonlySet<string> = new Set(ISO_4217_CODES.filter((code) => !NON_PAYMENT_CODES.includes(code)));

/**
 * `true` when `code` is a code of ISO 4217 List one a payment can be made in (every code of the
 * list except {@link NON_PAYMENT_CODES}). Case-sensitive: codes are upper case.
 */
export function isPaymentCurrency(code: string): boolean {
  return PAYABLE.has(code);
}
