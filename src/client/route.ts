import type { HttpMethod } from "../wire/http.js";

/** Where an operation's input fields travel on the wire (src/client/routes.ts holds one per operation). */
export interface Route {
  method: HttpMethod;
  /** Express-style: `:field` is the field's value, escaped. */
  path: string;
  /** The fields in the path. */
  params: readonly string[];
  /** Fields sent as headers: field → header name. */
  headers: Readonly<Record<string, string>>;
  /** Fields in the query string. */
  query: readonly string[];
  /** Fields of the JSON body. */
  body: readonly string[];
  /** The field that is the whole body, as text of this media type (an import's JSON Lines). */
  text: { readonly field: string; readonly mediaType: string } | null;
}
