/** The file that holds the generated types. */
export const TYPES_FILE: string;
/** The file's text for an OpenAPI document. */
export function renderOpenApiTypes(document: unknown): Promise<string>;
