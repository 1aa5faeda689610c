/**
 * Checks responses against the OpenAPI document of the reference endpoints: the status is one the
 * operation documents, the media type one of its contents, the body valid against its schema
 * (JSON Schema 2020-12, by Ajv), and every required header present and valid. The payment-link
 * specifications check every handler response with it (test/payment-links/support.ts), the example
 * tests every response they fetch (`documentedFetch`).
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { type OpenApiDocument, type OpenApiOperationId, createOpenApiDocument } from '../../src/payment-links/index.js';

export const OPENAPI: OpenApiDocument = createOpenApiDocument();

const DOCUMENT_ID = 'urn:paygate-auth:openapi';

interface Operation {
  readonly path: string;
  readonly method: string;
  readonly pointer: string;
  readonly responses: Readonly<Record<string, ResponseObject>>;
}

interface HeaderObject {
  readonly required?: boolean;
  readonly schema: { readonly type?: string };
}

interface ResponseObject {
  readonly headers?: Readonly<Record<string, HeaderObject>>;
  readonly content?: Readonly<Record<string, unknown>>;
}

/** A response as a handler returns it (header names lower case) or as fetch receives it. */
export interface CheckedResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>> | Headers;
  readonly body: unknown;
}

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
// The document's own members are not schema keywords; its schemas are reached through JSON pointers.
ajv.addVocabulary(['openapi', 'info', 'servers', 'paths', 'components']);
ajv.addSchema({ ...OPENAPI, $id: DOCUMENT_ID });

const pointerPart = (part: string): string => part.replace(/~/g, '~0').replace(/\//g, '~1');

function operations(document: OpenApiDocument): Map<OpenApiOperationId, Operation> {
  const found = new Map<OpenApiOperationId, Operation>();
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Record<string, unknown>>>)) {
    for (const [method, operation] of Object.entries(item)) {
      found.set(operation.operationId as OpenApiOperationId, {
        path,
        method: method.toUpperCase(),
        pointer: `#/paths/${pointerPart(path)}/${method}`,
        responses: operation.responses as Record<string, ResponseObject>,
      });
    }
  }
  return found;
}

const OPERATIONS = operations(OPENAPI);

const validators = new Map<string, ValidateFunction>();

function validator(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

/** Every way `value` departs from the schema at `pointer` (`#/components/schemas/LinkRequest`); `[]` when none. */
export function schemaMismatches(pointer: string, value: unknown): string[] {
  const validate = validator(pointer);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '(root)'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
}

function headerOf(headers: CheckedResponse['headers'], name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  return headers[name.toLowerCase()];
}

/** The media type of a `Content-Type` value, without parameters, lower case. */
function essence(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim().toLowerCase();
}

/** Every way `response` departs from what the document says `operationId` answers; `[]` when none. */
export function openApiMismatches(operationId: OpenApiOperationId, response: CheckedResponse): string[] {
  const operation = OPERATIONS.get(operationId);
  if (operation === undefined) return [`no operation ${operationId} in the document`];
  const status = String(response.status);
  const documented = operation.responses[status];
  if (documented === undefined) return [`${operationId} does not document status ${status}`];
  const at = `${operation.pointer}/responses/${status}`;
  const problems: string[] = [];
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    const value = headerOf(response.headers, name);
    if (value === undefined) {
      if (header.required === true) problems.push(`header ${name} is required`);
      continue;
    }
    const typed = header.schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    problems.push(...schemaMismatches(`${at}/headers/${pointerPart(name)}/schema`, typed).map((error) => `header ${name}: ${error}`));
  }
  const media = essence(headerOf(response.headers, 'content-type'));
  const content = documented.content ?? {};
  if (media === undefined || !Object.hasOwn(content, media)) {
    problems.push(`content type ${String(media)} is not one of ${Object.keys(content).join(', ')}`);
    return problems;
  }
  // A handler's body is a value to serialise: check what the wire would carry.
  const body = JSON.parse(JSON.stringify(response.body)) as unknown;
  problems.push(...schemaMismatches(`${at}/content/${pointerPart(media)}/schema`, body).map((error) => `body ${error}`));
  return problems;
}

/** Throws, listing the mismatches, unless `response` is what the document says `operationId` answers. */
export function expectDocumented(operationId: OpenApiOperationId, response: CheckedResponse): void {
  const problems = openApiMismatches(operationId, response);
  if (problems.length > 0) {
    throw new Error(
      `${operationId} answered ${response.status} ${JSON.stringify(response.body)} outside its OpenAPI description:\n  ${problems.join('\n  ')}`,
    );
  }
}

/** The operation `method` on `pathname` is, by the document's paths (`{id}` matches one segment). */
export function operationAt(method: string, pathname: string): OpenApiOperationId | undefined {
  for (const [id, operation] of OPERATIONS) {
    const pattern = new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (operation.method === method.toUpperCase() && pattern.test(pathname)) return id;
  }
  return undefined;
}

/**
 * `fetch`, and the response checked against the document (its body read from a clone, so the
 * caller can still read it). A request to no documented operation throws.
 */
export async function documentedFetch(input: Request | string | URL, init: RequestInit = {}): Promise<Response> {
  const request = new Request(input, init);
  const { pathname } = new URL(request.url);
  const operationId = operationAt(request.method, pathname);
  if (operationId === undefined) throw new Error(`${request.method} ${pathname} is no operation of the OpenAPI document`);
  const response = await fetch(request);
  const text = await response.clone().text();
  const body = /json/.test(response.headers.get('content-type') ?? '') && text !== '' ? (JSON.parse(text) as unknown) : text;
  expectDocumented(operationId, { status: response.status, headers: response.headers, body });
  return response;
}
